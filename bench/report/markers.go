package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hookrelay/hookrelay/bench/results"
)

// marker opens a table: `<!-- results FILE TABLE -->`; endMarker closes it.
var marker = regexp.MustCompile(`(?m)^<!-- results (\S+) (\S+) -->$`)

const endMarker = "<!-- end results -->"

// source gives the data file a marker names (by its path from the root)
// as the path to name and its lines.
type source func(file string) (string, []results.Line, error)

// rewrite is doc with every marked table made again from the lines its
// source gives, the marker naming the file they came from.
func rewrite(doc string, src source) (string, error) {
	var out strings.Builder
	rest := doc
	for {
		loc := marker.FindStringSubmatchIndex(rest)
		if loc == nil {
			out.WriteString(rest)
			return out.String(), nil
		}
		file, name := rest[loc[2]:loc[3]], rest[loc[4]:loc[5]]
		mk, ok := tables[name]
		if !ok {
			return "", fmt.Errorf("unknown table %q (tables: %s)", name, strings.Join(tableNames(), ", "))
		}
		end := strings.Index(rest[loc[1]:], "\n"+endMarker)
		if end < 0 {
			return "", fmt.Errorf("table %q has no %s", name, endMarker)
		}
		path, lines, err := src(file)
		if err != nil {
			return "", err
		}
		out.WriteString(rest[:loc[0]])
		fmt.Fprintf(&out, "<!-- results %s %s -->\n%s%s", path, name, mk(lines), endMarker)
		rest = rest[loc[1]+end+1+len(endMarker):]
	}
}
