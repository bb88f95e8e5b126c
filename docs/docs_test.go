package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines keeps README.md, BENCHMARKS.md and RELIABILITY.md front
// pages: the rest belongs in docs/, and earlier runs in git history.
const readmeMaxLines = 300

// frontPages are the documents at the repository's root, kept short.
var frontPages = []string{"../README.md", "../BENCHMARKS.md", "../RELIABILITY.md", "../CHANGELOG.md"}

// TestReadmeIsShort: README.md, BENCHMARKS.md and RELIABILITY.md stay
// under readmeMaxLines lines.
func TestReadmeIsShort(t *testing.T) {
	for _, page := range frontPages[:3] {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n >= readmeMaxLines {
			t.Errorf("%s has %d lines; keep it under %d: the rest goes into docs/ (earlier runs are in git history)",
				filepath.Base(page), n, readmeMaxLines)
		}
	}
}

// trackedFiles lists the repository's tracked files, relative to its root
// (the parent of this directory).
func trackedFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files lists only %d files", len(files))
	}
	return files
}

// outside are references to documents outside the repository, which no
// user has: spelled in two parts so that this file does not hold them.
var outside = []string{".." + "/shared", "POLICIES" + ".md"}

// TestNoReferenceOutsideTheRepository: no tracked file mentions a document
// outside the repository; the policy reference is docs/policies.md.
func TestNoReferenceOutsideTheRepository(t *testing.T) {
	for _, f := range trackedFiles(t) {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range outside {
			if i := bytes.Index(b, []byte(s)); i >= 0 {
				line := bytes.Count(b[:i], []byte("\n")) + 1
				t.Errorf("%s:%d refers to %s, outside the repository; cite docs/policies.md instead", f, line, s)
			}
		}
	}
}

// link matches a Markdown link or image target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve: every relative link of docs/*.md and the root's
// front pages (README.md, BENCHMARKS.md, RELIABILITY.md, CHANGELOG.md) names
// a file that exists, and its #anchor, if any, a heading of that file (or of
// the same file for a bare #anchor).
func TestDocLinksResolve(t *testing.T) {
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, doc := range append(docs, frontPages...) {
		for _, target := range links(t, doc) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			if path == "" {
				path = filepath.Base(doc)
			}
			checkTarget(t, doc, filepath.Join(filepath.Dir(doc), path), anchor)
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found in README.md and docs/*.md", checked)
	}
}

// links returns the link targets of the Markdown file at path, outside code
// blocks and code spans.
func links(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// checkTarget reports, for a reference found in from, a file that does not
// exist or an anchor that is none of its headings' anchors.
func checkTarget(t *testing.T, from, path, anchor string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s links to %s, which does not exist", from, path)
		return
	}
	if anchor == "" {
		return
	}
	if !strings.HasSuffix(path, ".md") {
		t.Errorf("%s links to #%s in %s, which is not Markdown", from, anchor, path)
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !anchors(string(b))[anchor] {
		t.Errorf("%s links to %s#%s; %s has no such heading", from, path, anchor, path)
	}
}

// anchors returns the anchors GitHub gives the headings of a Markdown text:
// lower case, spaces to hyphens, punctuation but - and _ dropped, and -1,
// -2, … after a repeated one.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		n, title := heading(line)
		if n == 0 || fenced {
			continue
		}
		a := slug(title)
		if k := seen[a]; k > 0 {
			out[a+"-"+strconv.Itoa(k)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// slug is GitHub's anchor for a heading's text.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// cite matches a reference to a document of docs/ in any file: the
// repository-relative path docs/NAME.md, with its #anchor if any.
var cite = regexp.MustCompile(`\bdocs/([a-z0-9-]+\.md)(?:#([a-z0-9_-]+))?`)

// TestCitationsResolve: every docs/NAME.md#anchor that a tracked file cites
// (Go comments, tests, error messages, the OpenAPI document) names a document
// of docs/ and one of its headings.
func TestCitationsResolve(t *testing.T) {
	checked := 0
	for _, f := range trackedFiles(t) {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cite.FindAllStringSubmatch(string(b), -1) {
			checkTarget(t, f, m[1], m[2])
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("only %d citations of docs/*.md found", checked)
	}
}
