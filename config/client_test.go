package config_test

import (
	"os"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/config"
)

// TestLoadClient: the management commands' defaults, and a URL they cannot
// use named with its variable.
func TestLoadClient(t *testing.T) {
	c, err := config.LoadClient(func(string) string { return "" })
	if err != nil || c.URL != config.DefaultURL || c.APIKey != "" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	vars := map[string]string{config.EnvURL: "https://hooks.example.com/", config.EnvAPIKey: " hr_abc "}
	c, err = config.LoadClient(func(k string) string { return vars[k] })
	if err != nil || c.URL != "https://hooks.example.com" || c.APIKey != "hr_abc" {
		t.Fatalf("set: %+v %v", c, err)
	}
	for _, bad := range []string{"127.0.0.1:8080", "ftp://x", "http://"} {
		if _, err := config.LoadClient(func(k string) string { return map[string]string{config.EnvURL: bad}[k] }); err == nil ||
			!strings.Contains(err.Error(), config.EnvURL) {
			t.Errorf("%s=%q: %v", config.EnvURL, bad, err)
		}
	}
}

// TestClientVariablesDocumented: docs/cli.md's variable table lists the
// management commands' variables, and no server's.
func TestClientVariablesDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range config.ClientVariables() {
		if !strings.Contains(string(b), "| `"+v+"` |") {
			t.Errorf("docs/cli.md has no table row for %s", v)
		}
	}
	for _, v := range config.Variables() {
		if strings.Contains(string(b), "| `"+v+"` |") {
			t.Errorf("docs/cli.md lists the server's %s among the client's variables", v)
		}
	}
}
