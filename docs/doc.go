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
	"testing"
)

//go:embed *.md
var files embed.FS

// Table returns the cells of the body rows of the tables in the section of
// the Markdown file name (in this directory) under the heading title; a
// file or heading that is not there fails tb.
func Table(tb testing.TB, name, title string) [][]string {
	tb.Helper()
	text, err := section(name, title)
	if err != nil {
		tb.Fatal(err)
	}
	return rows(text)
}

// section returns the text of the Markdown file name (in this directory)
// under the heading whose text is title, at any level, up to the next
// heading of the same or a higher level. Lines inside fenced code blocks are
// never headings.
func section(name, title string) (string, error) {
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
		if n, text := heading(line); n > 0 && !fenced {
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

// atxHeading matches an ATX heading: its level and its text.
var atxHeading = regexp.MustCompile(`^(#{1,6}) +(.*?) *#*$`)

// heading returns the level and text of line when it is a Markdown heading
// (outside a code block), else 0.
func heading(line string) (int, string) {
	m := atxHeading.FindStringSubmatch(line)
	if m == nil {
		return 0, ""
	}
	return len(m[1]), m[2]
}

// separator matches a table's delimiter row: | --- | :-: |.
var separator = regexp.MustCompile(`^\|( *:?-+:? *\|)+ *$`)

// rows returns the cells of every body row of the tables in text, trimmed:
// header rows (those followed by a delimiter row) and delimiter rows are
// left out. An escaped pipe (\|) stays inside its cell, unescaped.
func rows(text string) [][]string {
	lines := strings.Split(text, "\n")
	var out [][]string
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || separator.MatchString(line) {
			continue
		}
		if i+1 < len(lines) && separator.MatchString(strings.TrimSpace(lines[i+1])) {
			continue
		}
		out = append(out, cells(line))
	}
	return out
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
