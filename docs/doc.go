// Package docs holds hookrelay's documentation: the Markdown files in this
// directory, embedded so that the tests of other packages can read the
// tables that must match their code (the routes in api.md, the
// configuration variables and metrics in operations.md). Its own tests keep
// the documents' links working and the repository free of references to
// files outside it.
package docs

import (
	"embed"
	"fmt"
	"regexp"
	"strings"
)

//go:embed *.md
var files embed.FS

// Section returns the text of the Markdown file name (in this directory)
// under the heading whose text is title, at any level, up to the next
// heading of the same or a higher level. Lines inside fenced code blocks are
// never headings.
func Section(name, title string) (string, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return "", err
	}
	var out []string
	level, fenced := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if n, text := Heading(line); n > 0 && !fenced {
			if level > 0 && n <= level {
				break
			}
			if level == 0 && text == title {
				level = n
				continue
			}
		}
		if level > 0 {
			out = append(out, line)
		}
	}
	if level == 0 {
		return "", fmt.Errorf("%s has no heading %q", name, title)
	}
	return strings.Join(out, "\n"), nil
}

// heading matches an ATX heading: its level and its text.
var heading = regexp.MustCompile(`^(#{1,6}) +(.*?) *#*$`)

// Heading returns the level and text of line when it is a Markdown heading
// (outside a code block), else 0.
func Heading(line string) (int, string) {
	m := heading.FindStringSubmatch(line)
	if m == nil {
		return 0, ""
	}
	return len(m[1]), m[2]
}

// separator matches a table's delimiter row: | --- | :-: |.
var separator = regexp.MustCompile(`^\|( *:?-+:? *\|)+ *$`)

// Rows returns the cells of every body row of the tables in text, trimmed:
// header rows (those followed by a delimiter row) and delimiter rows are
// left out. An escaped pipe (\|) stays inside its cell, unescaped.
func Rows(text string) [][]string {
	lines := strings.Split(text, "\n")
	var rows [][]string
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || separator.MatchString(line) {
			continue
		}
		if i+1 < len(lines) && separator.MatchString(strings.TrimSpace(lines[i+1])) {
			continue
		}
		rows = append(rows, cells(line))
	}
	return rows
}

// cells splits a table row at its unescaped pipes.
func cells(row string) []string {
	const mark = "\x00"
	row = strings.ReplaceAll(row, `\|`, mark)
	parts := strings.Split(strings.Trim(row, "|"), "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.ReplaceAll(p, mark, "|"))
	}
	return parts
}

// codeSpan matches `code`.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// CodeSpans returns the contents of the `code spans` of s, in order.
func CodeSpans(s string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
