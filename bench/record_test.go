package bench

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/bench/results"
)

// TestRecord: a run's results are written as data, one line a phase with
// its figures (milliseconds, seconds, per second), the direct POST and
// history lines, and a "run" line with the summary's notes; the cluster
// benchmark's lines are its own suite's.
func TestRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	t.Setenv(results.Variable, path)
	r := newRun(&testing.B{}, "hookrelay as make run ships it")
	r.rcv = &hitReceiver{}
	t0 := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	r.results["hookrelay 50/s"] = phaseResult{events: 1000, receipts: 1000, perSecond: 49.5,
		e2e:       [3]time.Duration{6 * time.Millisecond, 17 * time.Millisecond, 30 * time.Millisecond},
		pub:       [4]time.Duration{2 * time.Millisecond, 9 * time.Millisecond, 16400 * time.Microsecond, 40 * time.Millisecond},
		firstSend: t0, sendEnd: t0.Add(20 * time.Second), lastReceipt: t0.Add(21500 * time.Millisecond)}
	r.results["floor saturated"] = phaseResult{events: 4000, receipts: 4000, perSecond: 129.1}
	r.figures["direct POST"] = map[string]float64{"per_second": 16276}
	r.extra["overload"] = "330/s"
	if err := r.record(); err != nil {
		t.Fatal(err)
	}
	lines, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines: %+v", len(lines), lines)
	}
	paced, err := results.Find(lines, "hookrelay 50/s")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"events": 1000, "per_second": 49.5, "e2e_p95_ms": 17, "publish_p99_ms": 16.4, "drain_s": 1.5}
	for k, v := range want {
		if paced.Figures[k] != v {
			t.Errorf("%s = %v, want %v", k, paced.Figures[k], v)
		}
	}
	if paced.Suite != results.SuiteBenchDev || paced.Commit == "" || paced.Machine == "" {
		t.Errorf("line's run: %+v", paced)
	}
	run, _ := results.Find(lines, "run")
	direct, _ := results.Find(lines, "direct POST")
	if run.Notes["overload"] != "330/s" || direct.Figures["per_second"] != 16276 {
		t.Errorf("run line %+v, direct line %+v", run, direct)
	}
	if suiteOf("BenchmarkCluster") != results.SuiteBenchCluster || suiteOf("BenchmarkShipped") != results.SuiteBenchDev {
		t.Error("suiteOf")
	}
}
