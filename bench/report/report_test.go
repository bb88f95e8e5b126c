package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/bench/results"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// fromRoot reads the data file a marker names, from the repository.
func fromRoot(file string) (string, []results.Line, error) {
	lines, err := results.Read(filepath.Join(root, file))
	return file, lines, err
}

// TestDocumentsMatchTheirData: every table of BENCHMARKS.md and
// RELIABILITY.md is the one its marker's data file makes (regenerate with
// `go run ./bench/report -w FILE`), all of them from one data file, and
// the documents hold the tables a reader looks for.
func TestDocumentsMatchTheirData(t *testing.T) {
	want := map[string][]string{"BENCHMARKS.md": {"bench-dev", "bench-cluster"}, "RELIABILITY.md": {"chaos", "cluster"}}
	files := map[string]bool{}
	for _, doc := range documents {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		made, err := rewrite(string(b), fromRoot)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if made != string(b) {
			t.Errorf("%s's tables differ from what their data file makes: run `go run ./bench/report -w FILE`", doc)
		}
		for _, m := range marker.FindAllStringSubmatch(string(b), -1) {
			files[m[1]] = true
		}
		for _, name := range want[doc] {
			if !strings.Contains(string(b), " "+name+" -->") {
				t.Errorf("%s has no table %s", doc, name)
			}
		}
	}
	if len(files) != 1 {
		t.Errorf("the documents' tables come from %d data files, want one: %v", len(files), files)
	}
}

// TestRewrite: a marked table is made again from its lines and the marker
// names the new file; text around it stays; an unknown table or a
// missing end marker is an error.
func TestRewrite(t *testing.T) {
	lines := []results.Line{{Suite: results.SuiteChaos, Started: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC), Commit: "abc1234",
		Machine: "nproc 2", Phase: "kill-worker", Figures: map[string]float64{"published": 150, "passed": 1, "lost": 0},
		Notes: map[string]string{"fault": "kill-worker", "receiver": "ok"}}}
	src := func(string) (string, []results.Line, error) { return "bench/results/new.jsonl", lines, nil }
	doc := "# R\n\nbefore\n<!-- results bench/results/old.jsonl chaos -->\nstale\n<!-- end results -->\nafter\n"
	got, err := rewrite(doc, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"before\n<!-- results bench/results/new.jsonl chaos -->\n", "`chaos` on commit `abc1234`, started 2026-11-29 03:00 UTC",
		"| kill-worker | kill-worker | ok | 150 | — | — | 0 | — |", "passed |\n\n<!-- end results -->\nafter\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("rewritten document lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "stale") {
		t.Errorf("the old table stayed:\n%s", got)
	}
	again, err := rewrite(got, src)
	if err != nil || again != got {
		t.Errorf("rewriting twice changed the document (%v)", err)
	}
	for _, bad := range []string{"<!-- results f.jsonl nope -->\n<!-- end results -->\n", "<!-- results f.jsonl chaos -->\nno end\n"} {
		if _, err := rewrite(bad, src); err == nil {
			t.Errorf("rewrite(%q): no error", bad)
		}
	}
}

// TestBenchTableRatios: each system's figures are given as ratios to the
// same run's floor, bare activity workflow and direct POST.
func TestBenchTableRatios(t *testing.T) {
	line := func(phase string, f map[string]float64) results.Line {
		return results.Line{Suite: results.SuiteBenchDev, Phase: phase, Figures: f}
	}
	lines := []results.Line{
		line("floor saturated", map[string]float64{"per_second": 100}),
		line("baseline saturated", map[string]float64{"per_second": 50}),
		line("hookrelay saturated", map[string]float64{"per_second": 80}),
		line("direct POST", map[string]float64{"per_second": 16000}),
		line("floor 50/s", map[string]float64{"e2e_p95_ms": 10, "publish_p99_ms": 20}),
		line("hookrelay 50/s", map[string]float64{"e2e_p95_ms": 15, "publish_p99_ms": 10}),
	}
	got := benchTable(lines)
	if want := "| **hookrelay** | 80.0 | 0.80× | 1.60× | 0.0050× | 15.0 ms | 1.50× | 10.0 ms | 0.50× | — |"; !strings.Contains(got, want) {
		t.Errorf("benchTable lacks %q:\n%s", want, got)
	}
	if strings.Contains(got, "Convoy") {
		t.Errorf("a peer not run has a row:\n%s", got)
	}
}

// TestNeighboursTable: each scenario's p95 is a ratio to the healthy
// endpoint's alone, held to its own line: 2× alone and 50 ms, or 100 ms for
// the saturating (c) and (d).
func TestNeighboursTable(t *testing.T) {
	line := func(phase string, p95 float64) results.Line {
		return results.Line{Suite: results.SuiteBenchDev, Phase: phase,
			Figures: map[string]float64{"e2e_p50_ms": 5, "e2e_p95_ms": p95, "e2e_p99_ms": 90}}
	}
	run := results.Line{Phase: "run", Notes: map[string]string{
		"neighbour a-held-25s": "a-held-25s: healthy ...; other endpoint: 600 events published"}}
	got := neighboursTable([]results.Line{line("healthy alone", 20), line("healthy beside a-held-25s", 45),
		line("healthy beside b-never-answers", 41), line("healthy beside d-burst-503", 90), run})
	for _, want := range []string{
		"| a-held-25s | 5.0 / 45.0 / 90.0 ms | 2.25× | ≤ 2× and 50 ms | **no** (45.0 ms) | 600 events published |",
		"| b-never-answers | 5.0 / 41.0 / 90.0 ms | 2.05× | ≤ 2× and 50 ms | **no** (41.0 ms) |  |",
		"| d-burst-503 | 5.0 / 90.0 / 90.0 ms | 4.50× | ≤ 100 ms | yes |  |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("neighboursTable lacks %q:\n%s", want, got)
		}
	}
}
