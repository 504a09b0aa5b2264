package vppcli

import (
	"strings"
	"unicode/utf8"
)

// Width is the column at which comments and views are wrapped. CLI
// commands are not: VPP reads one command per line.
const Width = 100

// Wrap breaks text at spaces into lines of at most width characters, the first
// starting with first and the others with cont. A word longer than a line
// stays whole on a line of its own rather than being cut.
func Wrap(first, cont, text string, width int) []string {
	words := strings.Fields(text)
	var out []string
	line := first
	empty := true
	for _, w := range words {
		if !empty && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width {
			out = append(out, line)
			line, empty = cont, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	return append(out, line)
}
