package policies

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRowsMatchNext: for every builtin (jitter off) the table and Next agree
// on every retry, and the row count is the number of deliveries.
func TestRowsMatchNext(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cite string
		name string
		rows int
	}{
		{"§workfront: 12 deliveries", NameWorkfront, 12},
		{"§workfront-legacy: 1 + 12 retries", NameWorkfrontLegacy, 13},
		{"§sap: 1 + 5 retries", NameSAP, 6},
		{"§eventgrid: 30 attempts inside 1440 min", NameEventGrid, 30},
		{"§eventgrid-edge: the 7200 s TTL stops it at retry 12", NameEventGridEdge, 13},
	}
	for _, c := range cases {
		p := mustResolve(t, c.name, Overrides{JitterFraction: ptr(0.0)})
		rows := p.Rows()
		offsets, _ := simulate(t, p, 0)
		if len(rows) != c.rows || len(offsets)+1 != c.rows {
			t.Errorf("docs/policies.md %s: %d rows, %d retries from Next", c.cite, len(rows), len(offsets))
			continue
		}
		for k, o := range offsets {
			r := rows[k+1]
			if r.Attempt != k+1 || r.Offset != o || r.Gap != o-rows[k].Offset || r.GapMin != r.Gap || r.GapMax != r.Gap {
				t.Errorf("docs/policies.md %s: row %+v, Next offset %v", c.cite, r, o)
			}
		}
	}
}

// TestRowsJitterBounds: Event Grid's gap range is ±10% (docs/policies.md#eventgrid).
func TestRowsJitterBounds(t *testing.T) {
	t.Parallel()
	r := EventGrid().Rows()[1]
	if r.Gap != 10*time.Second || r.GapMin != 9*time.Second || r.GapMax != 11*time.Second {
		t.Errorf("docs/policies.md#eventgrid: retry 1 row %+v", r)
	}
	off := mustResolve(t, NameSAP, Overrides{JitterFraction: ptr(0.5)}).Rows()[2]
	if off.Gap != 56*time.Second || off.GapMin != 20*time.Second || off.GapMax != 92*time.Second {
		t.Errorf("docs/policies.md#sap with jitter: offsets 8 s and 64 s ±50%%, row %+v", off)
	}
}

// TestRowsUnbounded: a schedule with no limit stops at 100 rows.
func TestRowsUnbounded(t *testing.T) {
	t.Parallel()
	p := WorkfrontLegacy()
	p.MaxAttempts = 0
	if rows := p.Rows(); len(rows) != 100 || rows[99].Offset != 99*10*time.Minute {
		t.Errorf("docs/policies.md#workfront-legacy without a limit: %d rows", len(rows))
	}
}

// TestRenderWorkfront: 11 retries, the last at 173,585.6 s (docs/policies.md#workfront).
func TestRenderWorkfront(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Render(&b, Workfront()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Policy:", "workfront", "docs/policies.md#workfront", "12 (first delivery + 11 retries)",
		"ATTEMPT", "GAP", "OFFSET", "84.8s (1m24.8s)", "254.4s (4m14.4s)", "593.6s (9m53.6s)",
		"retry 11", "173585.6s (48h13m5.6s)", "dead_letter (final status dead_lettered)", "any 2xx",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("docs/policies.md#workfront: output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "retry 12") || strings.Contains(out, "GAP RANGE") {
		t.Errorf("docs/policies.md#workfront: 11 retries, no jitter:\n%s", out)
	}
}

// TestRenderEventGrid: jitter adds a GAP RANGE column; the edge table says
// where its TTL cuts it (docs/policies.md#eventgrid, docs/policies.md#eventgrid-edge).
func TestRenderEventGrid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cite string
		p    Policy
		want []string
	}{
		{"§eventgrid", EventGrid(), []string{"GAP RANGE", "9.0s (9s) .. 11.0s (11s)", "400, 413", "±10%",
			"86400.0s (24h0m0s)", "retry 29", "85600.0s (23h46m40s)", "dropped"}},
		{"§eventgrid-edge", EventGridEdge(), []string{"retry 12", "6660.0s (1h51m0s)",
			"TTL: retry 13 would be due at 7260.0s (2h1m0s), after the TTL of 7200.0s (2h0m0s)"}},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := Render(&b, c.p); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("docs/policies.md %s: output lacks %q:\n%s", c.cite, w, b.String())
			}
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestRenderError: a write error comes back wrapped.
func TestRenderError(t *testing.T) {
	t.Parallel()
	if err := Render(failWriter{}, SAP()); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Render to a failing writer: %v", err)
	}
}

// TestDocJSON: the API form uses snake_case and seconds (docs/policies.md#workfront).
func TestDocJSON(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(Workfront().Doc())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	rows := doc["rows"].([]any)
	last := rows[len(rows)-1].(map[string]any)
	health := doc["health"].(map[string]any)
	checks := []struct {
		key       string
		got, want any
	}{
		{"rows", len(rows), 12},
		{"rows[11].offset_seconds", last["offset_seconds"], 173585.6},
		{"rows[11].gap_seconds", last["gap_seconds"], 86835.2},
		{"rows[11].attempt", last["attempt"], 11.0},
		{"max_attempts", doc["max_attempts"], 12.0},
		{"timeout_seconds", doc["timeout_seconds"], 5.0},
		{"ttl_seconds", doc["ttl_seconds"], 0.0},
		{"schedule_kind", doc["schedule_kind"], "offsets"},
		{"on_exhausted", doc["on_exhausted"], "dead_letter"},
		{"success_codes", len(doc["success_codes"].([]any)), 0},
		{"health.window_seconds", health["window_seconds"], 86400.0},
		{"health.probe_interval_seconds", health["probe_interval_seconds"], 600.0},
		{"health.freeze_no_success_for_seconds", health["freeze_no_success_for_seconds"], 259200.0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("docs/policies.md#workfront: %s = %v, want %v", c.key, c.got, c.want)
		}
	}
}
