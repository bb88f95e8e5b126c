package config_test

import (
	"slices"
	"testing"

	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/docs"
)

// TestDocsListEveryVariable: the configuration table of docs/operations.md
// ("## Configuration") names exactly the environment variables config/
// reads, each once.
func TestDocsListEveryVariable(t *testing.T) {
	documented := map[string]bool{}
	for _, cells := range docs.Table(t, "operations.md", "Configuration") {
		for _, name := range docs.CodeSpans(cells[0]) {
			if documented[name] {
				t.Errorf("docs/operations.md lists %s twice", name)
			}
			documented[name] = true
		}
	}
	read := config.Variables()
	for _, name := range read {
		if !documented[name] {
			t.Errorf("config/ reads %s, which the table of docs/operations.md does not list", name)
		}
	}
	for name := range documented {
		if !slices.Contains(read, name) {
			t.Errorf("docs/operations.md lists %s, which config/ does not read", name)
		}
	}
	if len(read) < 20 {
		t.Fatalf("config.Variables() lists only %d variables", len(read))
	}
}
