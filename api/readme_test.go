package api

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/testenv"
)

// readmeRow is a row of the README's API table: | `GET` | `/v1/x/{id}` | auth | what |.
var readmeRow = regexp.MustCompile("^\\| `([A-Z]+)` \\| `(/[^`]*)` \\| ([^|]+) \\|")

// readmeRoutes reads the API table of README.md: "METHOD /path/{param}" to
// its auth cell.
func readmeRoutes(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## API\n")
	if !ok {
		t.Fatal("README.md has no ## API section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if m := readmeRow.FindStringSubmatch(line); m != nil {
			rows[m[1]+" "+m[2]] = strings.TrimSpace(m[3])
		}
	}
	return rows
}

// TestReadmeListsEveryRoute: the README's API table and the routes the
// server registers (with metrics on) are the same, and the table says
// "none" of exactly the routes that need no credentials.
func TestReadmeListsEveryRoute(t *testing.T) {
	t.Parallel()
	rows := readmeRoutes(t)
	e := New(&Server{Metrics: metrics.New(), Logger: testenv.Logger()})
	served := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method == echo.RouteNotFound || console.IsConsolePath(r.Path) {
			continue // the web console's pages: docs/console.md
		}
		key := r.Method + " " + echoParam.ReplaceAllString(r.Path, "{$1}")
		served[key] = true
		if auth, listed := rows[key]; listed && (auth == "none") != public(r.Path) {
			t.Errorf("README says %s needs %q; public: %v", key, auth, public(r.Path))
		}
	}
	listed := map[string]bool{}
	for k := range rows {
		listed[k] = true
	}
	if missing := difference(served, listed); len(missing) > 0 {
		t.Errorf("routes missing from the README's API table: %v", missing)
	}
	if extra := difference(listed, served); len(extra) > 0 {
		t.Errorf("README's API table lists routes the server does not have: %v", extra)
	}
	if len(served) < 40 {
		t.Fatalf("only %d routes found", len(served))
	}
}
