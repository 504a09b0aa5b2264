package renderer

import (
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// DecodeConfig decodes a YAML (or JSON) document into cfg, which should
// already hold the renderer's defaults: fields the document leaves out keep
// them. Decoding is strict, so a misspelt field is an error instead of a
// setting silently left at its default. Field names are the `json` tags of
// the config struct (sigs.k8s.io/yaml converts YAML to JSON first); renderer
// configs carry identical `yaml` tags for callers using a YAML library
// directly.
func DecodeConfig(data []byte, cfg any) error {
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return fmt.Errorf("decode renderer config: %w", err)
	}
	return nil
}

// LoadConfigFile reads the YAML file at path and decodes it into cfg like
// DecodeConfig.
func LoadConfigFile(path string, cfg any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read renderer config: %w", err)
	}
	if err := DecodeConfig(data, cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// FieldError reports one invalid configuration field by its YAML path (for
// example "egressSNAT.address"), so that an operator knows what to fix.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// FieldErrorf returns a *FieldError for field with a formatted reason.
func FieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// JoinFieldErrors combines the errors of one validation pass under the
// renderer's name; it returns nil when errs holds no error. Every invalid
// field is reported at once, not only the first.
func JoinFieldErrors(renderer string, errs ...error) error {
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid %s renderer config: %w", renderer, err)
	}
	return nil
}
