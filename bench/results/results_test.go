package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteRead: lines added by two runs of a suite and one of another
// read back as written, and Latest picks the later run's lines only.
func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	t.Setenv(Variable, path)
	first := Open(SuiteChaos)
	if err := first.Add("baseline", map[string]float64{"published": 150}, nil); err != nil {
		t.Fatal(err)
	}
	second := Open(SuiteChaos)
	second.started = first.started.Add(time.Minute)
	for _, phase := range []string{"baseline", "kill-worker"} {
		if err := second.Add(phase, map[string]float64{"published": 151}, map[string]string{"fault": phase}); err != nil {
			t.Fatal(err)
		}
	}
	if err := Open(SuiteBenchDev).Add("floor saturated", nil, nil); err != nil {
		t.Fatal(err)
	}
	lines, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 || lines[3].Figures == nil || lines[0].Machine == "" || lines[0].Commit == "" {
		t.Fatalf("read %d lines: %+v", len(lines), lines)
	}
	latest := Latest(lines, SuiteChaos)
	if len(latest) != 2 || latest[0].Figures["published"] != 151 || latest[1].Notes["fault"] != "kill-worker" {
		t.Errorf("latest chaos run: %+v", latest)
	}
	if l, err := Find(latest, "kill-worker"); err != nil || l.Phase != "kill-worker" {
		t.Errorf("Find: %+v, %v", l, err)
	}
	if _, err := Find(latest, "kill-api"); !errors.Is(err, ErrNoPhase) {
		t.Errorf("Find of a missing phase: %v", err)
	}
	if got := Latest(lines, SuiteCluster); len(got) != 0 {
		t.Errorf("a suite not run has lines: %+v", got)
	}
}

// TestUnset: without HOOKRELAY_RESULTS nothing is written, and adding is
// no error.
func TestUnset(t *testing.T) {
	t.Setenv(Variable, "")
	w := Open(SuiteBenchDev)
	if w != nil {
		t.Fatalf("Open without %s: %+v", Variable, w)
	}
	if err := w.Add("floor saturated", nil, nil); err != nil {
		t.Error(err)
	}
}

// TestReadRefusesBadLines: a line that is not JSON, or names no suite or
// phase, is an error naming the file and line.
func TestReadRefusesBadLines(t *testing.T) {
	for _, bad := range []string{"{\n", `{"suite": "chaos"}` + "\n"} {
		path := filepath.Join(t.TempDir(), "bad.jsonl")
		if err := os.WriteFile(path, []byte(`{"suite": "chaos", "phase": "a"}`+"\n\n"+bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "bad.jsonl:3") {
			t.Errorf("Read(%q): %v", bad, err)
		}
	}
}
