// Package decodeerr says what is wrong with a YAML or JSON input in the
// words of the file, not of the Go decoder: "field spec.ports: want a list,
// got a string" rather than "json: cannot unmarshal string into Go struct
// field ServiceSpec.spec.ports of type []v1.ServicePort". The cluster file
// and the renderer configuration are decoded by Kubernetes' and sigs.k8s.io's
// decoders, whose errors are plain text (Kubernetes' JSON decoder has its
// own copy of encoding/json's error types), so the errors are read from
// their text.
package decodeerr

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"
)

var (
	// typeMismatch is encoding/json's UnmarshalTypeError, with the field
	// path after the struct's name (Go 1.20 and later).
	typeMismatch = regexp.MustCompile(`json: cannot unmarshal (.+?) into Go (?:struct field [^.\s]+\.(\S+)|value) of type (\S+)`)
	unknownField = regexp.MustCompile(`json: unknown field ("[^"]*")`)
	// yamlSyntax is go-yaml's syntax error: "yaml: line 2: …".
	yamlSyntax = regexp.MustCompile(`yaml: (line \d+: .*)$`)
	noKind     = regexp.MustCompile(`Object 'Kind' is missing in`)
	// binary is what go-yaml and the stream splitter say of bytes that are
	// no text.
	binary = regexp.MustCompile(`UTF-8|UTF-16|invalid utf8|control characters are not allowed|invalid Unicode character`)
)

// Explain returns what is wrong with the input as a sentence, and false
// when err is not a decoding error it knows (then the caller keeps err).
func Explain(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	msg := err.Error()
	var mismatch *json.UnmarshalTypeError
	if errors.As(err, &mismatch) && mismatch.Type != nil {
		if mismatch.Field == "" {
			return "the top level: want a mapping, got " + valueKind(mismatch.Value), true
		}
		return "field " + mismatch.Field + ": want " + goKind(mismatch.Type) + ", got " + valueKind(mismatch.Value), true
	}
	if m := typeMismatch.FindStringSubmatch(msg); m != nil {
		got := valueKind(m[1])
		if m[2] == "" {
			return "the top level: want a mapping, got " + got, true
		}
		return "field " + m[2] + ": want " + typeKind(m[3]) + ", got " + got, true
	}
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		return "unknown field " + m[1] + " (misspelt, or at the wrong level?)", true
	}
	if binary.MatchString(msg) || !utf8.ValidString(msg) {
		return "not text (binary data): not YAML or JSON", true
	}
	if m := yamlSyntax.FindStringSubmatch(msg); m != nil {
		return "not valid YAML: " + m[1], true
	}
	if noKind.MatchString(msg) {
		return "no kind: not a Kubernetes object (want apiVersion and kind, or kind: List with items)", true
	}
	if _, rest, ok := strings.Cut(msg, "invalid character"); ok {
		return "not valid JSON: invalid character" + rest, true
	}
	if strings.HasSuffix(msg, "unexpected EOF") {
		return "cut short: the input ends inside a value", true
	}
	if _, rest, ok := strings.Cut(msg, "while decoding JSON: "); ok {
		// A value's own parser failed (an address, a duration): its words
		// say what is wrong, the decoder's layers before them do not.
		return "bad value: " + rest, true
	}
	return "", false
}

// valueKind names a JSON value as encoding/json describes it ("string",
// "array", "number 5", "object", "bool").
func valueKind(v string) string {
	switch kind, _, _ := strings.Cut(v, " "); kind {
	case "string":
		return "a string"
	case "array":
		return "a list"
	case "object":
		return "a mapping"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "null":
		return "null"
	}
	return v
}

// goKind names what a Go type takes in YAML, by its kind when its name
// does not say more.
func goKind(t reflect.Type) string {
	if k := typeKind(t.String()); !strings.HasPrefix(k, "a value of type") {
		return k
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	}
	return "a value of type " + t.String()
}

// typeKind names what a Go type, given by its name, takes in YAML.
func typeKind(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint") || strings.HasPrefix(t, "float"):
		return "a number"
	case t == "netip.Addr":
		return "an IP address"
	case t == "netip.Prefix":
		return "a CIDR"
	case t == "intstr.IntOrString":
		return "a number or a port name"
	case t == "v1.Time" || t == "time.Time":
		return "a timestamp"
	case t == "time.Duration":
		return "a duration"
	}
	// A struct of the schema: a section of the file.
	if _, name, ok := strings.Cut(t, "."); ok && name != "" && name[0] >= 'A' && name[0] <= 'Z' {
		if strings.HasSuffix(name, "Spec") || strings.HasSuffix(name, "Status") || strings.HasSuffix(name, "Config") || strings.HasSuffix(name, "Meta") {
			return "a mapping"
		}
	}
	return "a value of type " + t
}
