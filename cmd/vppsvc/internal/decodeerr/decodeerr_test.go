package decodeerr

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/yaml"
)

// The decoders' errors for the usual mistakes, as the file's author would
// say them: which field, what it wants, what it has.
func TestExplainDecoderErrors(t *testing.T) {
	type section struct {
		Address string   `json:"address"`
		Port    uint16   `json:"port"`
		List    []string `json:"list"`
	}
	type config struct {
		Section section  `json:"section"`
		Names   []string `json:"names"`
	}
	for _, tc := range []struct {
		name, input, want string
	}{
		{"a scalar where a list belongs", "names: web\n", "field names: want a list, got a string"},
		{"a list where a scalar belongs", "section: {address: [a, b]}\n", "field section.address: want a string, got a list"},
		{"a word where a number belongs", "section: {port: http}\n", "field section.port: want a number, got a string"},
		{"a number where a section belongs", "section: 5\n", "field section: want a mapping, got a number"},
		{"a scalar document", "just some words\n", "the top level: want a mapping, got a string"},
		{"misspelt field", "sektion: {}\n", `unknown field "sektion" (misspelt, or at the wrong level?)`},
		{"not YAML", "a: b\nthis is: [not\n: x\n", "not valid YAML: line 2: did not find expected ',' or ']'"},
		{"binary junk", "\xff\xfe\x00\x01garbage\x80\x81", "not text (binary data): not YAML or JSON"},
		{"binary junk after text", "names: [a]\n\x80\x81\x00\x02", "not text (binary data): not YAML or JSON"},
	} {
		var c config
		err := yaml.UnmarshalStrict([]byte(tc.input), &c)
		if !assert.Error(t, err, tc.name) {
			continue
		}
		got, ok := Explain(err)
		assert.True(t, ok, "%s: %v", tc.name, err)
		assert.Equal(t, tc.want, got, "%s: from %q", tc.name, err)
	}
}

// Kubernetes' decoder, an unexpected end, and errors that are no decoding
// errors (kept as they are).
func TestExplainOtherErrors(t *testing.T) {
	for _, tc := range []struct {
		err  string
		want string
		ok   bool
	}{
		{"json: cannot unmarshal string into Go struct field ServiceSpec.spec.ports of type []v1.ServicePort", "field spec.ports: want a list, got a string", true},
		{"json: cannot unmarshal number into Go struct field ServiceSpec.spec.ports.port of type int32", "field spec.ports.port: want a number, got a number", true},
		{"Object 'Kind' is missing in '{\"a\":1}'", "no kind: not a Kubernetes object (want apiVersion and kind, or kind: List with items)", true},
		{"unexpected EOF", "cut short: the input ends inside a value", true},
		{"error unmarshaling JSON: while decoding JSON: ParseAddr(\"1.2.3.999\"): IPv4 field has value >255", "bad value: ParseAddr(\"1.2.3.999\"): IPv4 field has value >255", true},
		{"open x: no such file or directory", "", false},
	} {
		got, ok := Explain(errors.New(tc.err))
		assert.Equal(t, tc.ok, ok, tc.err)
		assert.Equal(t, tc.want, got, tc.err)
	}
	_, ok := Explain(nil)
	assert.False(t, ok)
}
