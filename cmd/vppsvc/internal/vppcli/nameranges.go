package vppcli

import (
	"fmt"
	"strconv"
	"strings"
)

// nameRanges lists names compactly: runs of names that differ only by
// consecutive numeric suffixes of the same width become "prefix-00…07".
func nameRanges(names []string) string {
	var out []string
	for i := 0; i < len(names); {
		prefix, n, width, ok := splitNumber(names[i])
		j := i + 1
		for ok && j < len(names) {
			p, m, w, ok2 := splitNumber(names[j])
			if !ok2 || p != prefix || w != width || m != n+(j-i) {
				break
			}
			j++
		}
		switch {
		case j-i >= 3:
			out = append(out, fmt.Sprintf("%s…%s", names[i], names[j-1][len(prefix):]))
		default:
			out = append(out, names[i:j]...)
		}
		i = j
	}
	return strings.Join(out, ", ")
}

// splitNumber splits "nat44-filter-07" into "nat44-filter-", 7 and width 2.
func splitNumber(name string) (prefix string, n, width int, ok bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) {
		return "", 0, 0, false
	}
	n, err := strconv.Atoi(name[i:])
	return name[:i], n, len(name) - i, err == nil
}
