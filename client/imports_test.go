package client_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNoServerPackage: the client's code imports none of hookrelay's
// packages, so a program using it links no server code (api, store,
// Temporal, …).
func TestImportsNoServerPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/hookrelay/hookrelay") || strings.HasPrefix(path, "go.temporal.io/") {
				t.Errorf("%s imports %s", name, path)
			}
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("only %d files checked", checked)
	}
}
