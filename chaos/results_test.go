package chaos

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/bench/results"
	"github.com/hookrelay/hookrelay/policies"
)

// TestRecord: a scenario's line in the data file holds its tally, whether
// it passed (a cut row passes, an unmatched delivery does not), its fault
// and receiver.
func TestRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chaos.jsonl")
	t.Setenv(results.Variable, path)
	out := results.Open(results.SuiteChaos)
	ok := result{scenario: scenario{"all-together", "all-together", "ok", 150, 15}, Tally: Tally{Published: 150,
		Statuses: map[policies.Status]int{policies.StatusDelivered: 150}, Rows: 151, Cut: 1, Requests: 150, Settle: 28600 * time.Millisecond}}
	bad := ok
	bad.name, bad.Unmatched = "kill-worker", []string{"d1: 2 rows, 1 request"}
	record(t, out, ok, nil)
	record(t, out, bad, nil)
	lines, err := results.Read(path)
	if err != nil || len(lines) != 2 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	f := lines[0].Figures
	if f["passed"] != 1 || f["published"] != 150 || f["delivered"] != 150 || f["rows"] != 151 || f["cut"] != 1 || f["settle_s"] != 28.6 {
		t.Errorf("all-together: %v", f)
	}
	if lines[0].Notes["fault"] != "all-together" || lines[0].Suite != results.SuiteChaos {
		t.Errorf("all-together: %+v", lines[0])
	}
	if lines[1].Figures["passed"] != 0 || lines[1].Figures["unmatched"] != 1 {
		t.Errorf("kill-worker, unmatched: %v", lines[1].Figures)
	}
}
