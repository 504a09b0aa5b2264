package clusterfile

import (
	"bytes"
	"errors"
	"fmt"
)

// screen rejects, from a linear scan of its bytes, input that cannot hold
// Kubernetes objects but would cost the YAML decoder seconds and gigabytes
// to find out: a document (YAML) or stream (JSON) that is a list at the top
// level, where an object (a mapping with apiVersion and kind) belongs, and a
// document with more than maxEmptyEntries empty list entries. Documents are
// numbered as Parse numbers them.
func screen(source string, data []byte) error {
	if first := bytes.TrimLeft(data, " \t\r\n"); len(first) > 0 && first[0] == '[' {
		return &DecodeError{source, 1, errors.New("a JSON array, not a Kubernetes object (want an object with apiVersion and kind, or a List)")}
	}
	doc, inDoc, seenContent, empty := 1, false, false, 0
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		if rest, ok := bytes.CutPrefix(line, []byte("---")); ok && isBlankOrComment(rest) {
			// A document separator, counted as utilyaml's reader does:
			// it ends a document only if something came before it.
			if inDoc {
				doc++
			}
			inDoc, seenContent, empty = false, false, 0
			continue
		}
		inDoc = true
		trimmed := bytes.TrimSpace(line)
		if isBlankOrComment(trimmed) || trimmed[0] == '%' {
			continue
		}
		entry := isEntry(trimmed)
		if !seenContent && (entry || trimmed[0] == '[') {
			return &DecodeError{source, doc, errors.New("a YAML list, not a Kubernetes object (want apiVersion and kind, or kind: List with items)")}
		}
		seenContent = true
		if entry && isEmptyEntry(trimmed) {
			if empty++; empty > maxEmptyEntries {
				return &DecodeError{source, doc, fmt.Errorf("more than %d empty list entries (\"-\" lines): not Kubernetes objects", maxEmptyEntries)}
			}
		}
	}
	return nil
}

func isBlankOrComment(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || b[0] == '#'
}

// isEntry reports whether a trimmed line starts a block sequence entry.
func isEntry(trimmed []byte) bool {
	return trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' ' || trimmed[1] == '\t')
}

// isEmptyEntry reports whether a sequence entry line holds nothing: "-",
// "- ~", "- null", or a comment after the dash.
func isEmptyEntry(trimmed []byte) bool {
	v := bytes.TrimSpace(trimmed[1:])
	return isBlankOrComment(v) || string(v) == "~" || string(v) == "null"
}
