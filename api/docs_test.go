package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/docs"
	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/testenv"
)

// docRoutes reads the route table of docs/api.md ("## Routes": | `GET` |
// `/v1/x/{id}` | auth | what |): "METHOD /path/{param}" to its auth cell.
// A row that is not one method and one path fails the test.
func docRoutes(t *testing.T) map[string]string {
	t.Helper()
	rows := map[string]string{}
	for _, cells := range docs.Table(t, "api.md", "Routes") {
		if len(cells) != 4 {
			t.Fatalf("docs/api.md: a route row of %d cells: %q", len(cells), cells)
		}
		method, path := docs.CodeSpans(cells[0]), docs.CodeSpans(cells[1])
		if len(method) != 1 || len(path) != 1 || !strings.HasPrefix(path[0], "/") {
			t.Fatalf("docs/api.md: a route row without one method and one path: %q", cells)
		}
		rows[method[0]+" "+path[0]] = cells[2]
	}
	return rows
}

// TestDocsListEveryRoute: the route table of docs/api.md and the routes the
// server registers (with metrics on) are the same, and the table says
// "none" of exactly the routes that need no credentials.
func TestDocsListEveryRoute(t *testing.T) {
	t.Parallel()
	rows := docRoutes(t)
	e := New(&Server{Metrics: metrics.New(), Logger: testenv.Logger()})
	served := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method == echo.RouteNotFound || console.IsConsolePath(r.Path) {
			continue // the web console's pages: docs/console.md lists them
		}
		key := r.Method + " " + echoParam.ReplaceAllString(r.Path, "{$1}")
		served[key] = true
		if auth, listed := rows[key]; listed && (auth == "none") != public(r.Path) {
			t.Errorf("docs/api.md says %s needs %q; public: %v", key, auth, public(r.Path))
		}
	}
	listed := map[string]bool{}
	for k := range rows {
		listed[k] = true
	}
	sameKeys(t, served, "served", listed, "in the route table of docs/api.md")
	if len(served) < 40 {
		t.Fatalf("only %d routes found", len(served))
	}
}

// gaugeSource gives fixed gauges, as the store would.
type gaugeSource struct{}

func (gaugeSource) Gauges(context.Context) (metrics.Gauges, error) {
	return metrics.Gauges{EndpointsByState: map[string]int{"enabled": 1}}, nil
}

// labels is a metric's label list in the table: hookrelay_x{a, b}.
var labels = regexp.MustCompile(`\{[^}]*\}$`)

// docMetrics reads the hookrelay_* metric names of the table of
// docs/operations.md ("## Metrics"), labels left out.
func docMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, cells := range docs.Table(t, "operations.md", "Metrics") {
		for _, name := range docs.CodeSpans(cells[0]) {
			if strings.HasPrefix(name, metrics.Namespace+"_") {
				names[labels.ReplaceAllString(name, "")] = true
			}
		}
	}
	return names
}

// TestDocsListEveryMetric: the metrics table of docs/operations.md names
// exactly the hookrelay_* metrics a process exports once each has a value:
// the API's (its requests, the gauges read from PostgreSQL) and the
// worker's (attempts, deliveries, dead letters, sweeper, reconciliation, retention).
func TestDocsListEveryMetric(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.WithSource(gaugeSource{}, testenv.Logger())
	m.Published(1)
	m.Operational("hookrelay.endpoint.frozen")
	m.Finished("delivered", "workfront", time.Second, true)
	m.Attempt(true, "", time.Second, true, time.Second)
	m.SweeperStarted(1)
	m.DeadLetterBlob("written")
	m.Reconciled("terminated")
	m.Pruned("events", 1)
	e := New(&Server{Metrics: m, Logger: testenv.Logger()})
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), metrics.Namespace+"_") {
			exported[f.GetName()] = true
		}
	}
	sameKeys(t, exported, "exported", docMetrics(t), "in the metrics table of docs/operations.md")
	if len(exported) < 15 {
		t.Fatalf("only %d hookrelay metrics exported: %v", len(exported), exported)
	}
}
