package cluster_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/bench/results"
	"github.com/hookrelay/hookrelay/chaos"
	"github.com/hookrelay/hookrelay/policies"
)

// TestOutcomeFigures: a failure's line in the data file holds its tally,
// the publishes failed over, the slowest delivery and the wall time, and
// whether it passed: an accepted event not delivered fails it.
func TestOutcomeFigures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster.jsonl")
	t.Setenv(results.Variable, path)
	out := results.Open(results.SuiteCluster)
	o := outcome{failure: failure{name: "kill-api", what: "kill -9 api-2"}, Tally: chaos.Tally{Published: 156,
		Statuses: map[policies.Status]int{policies.StatusDelivered: 156}, Rows: 156, Requests: 156, Settle: 500 * time.Millisecond},
		refused: 40, slowest: 0.1, wall: 10900 * time.Millisecond, attempted: 156}
	short := o
	short.Statuses = map[policies.Status]int{policies.StatusDelivered: 155, policies.StatusDeadLettered: 1}
	record(t, out, o.name, o.figures(), map[string]string{"fault": o.what})
	record(t, out, "short", short.figures(), nil)
	lines, err := results.Read(path)
	if err != nil || len(lines) != 2 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	f := lines[0].Figures
	if f["passed"] != 1 || f["refused"] != 40 || f["published"] != 156 || f["wall_s"] != 10.9 || lines[0].Notes["fault"] != "kill -9 api-2" {
		t.Errorf("kill-api: %+v", lines[0])
	}
	if lines[1].Figures["passed"] != 0 || lines[1].Figures["dead_lettered"] != 1 {
		t.Errorf("one accepted event not delivered: %v", lines[1].Figures)
	}
}
