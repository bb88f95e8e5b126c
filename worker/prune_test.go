package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

// oldDelivery stores an event with one delivery that ended 40 days ago.
func oldDelivery(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/old",
		EventTypes: []string{"t"}, Policy: "workfront", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	res, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, ExternalID: "old", Type: "t"})
	if err != nil || len(res.Deliveries) != 1 {
		t.Fatalf("publish: %+v %v", res, err)
	}
	d := res.Deliveries[0]
	if _, err := st.FinishDelivery(ctx, store.Finish{DeliveryID: d.ID, Status: policies.StatusDelivered}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE deliveries SET updated_at = now() - interval '40 days', finished_at = now() - interval '40 days' WHERE id = $1`,
		`UPDATE events SET created_at = now() - interval '40 days' WHERE id = (SELECT event_id FROM deliveries WHERE id = $1)`,
	} {
		if _, err := st.DB().ExecContext(ctx, q, d.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// prunedLines are the retention_pruned records logged in buf.
func prunedLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var rec map[string]any
		if len(line) == 0 {
			continue
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %s: %v", line, err)
		}
		if rec["msg"] == "retention_pruned" {
			out = append(out, rec)
		}
	}
	return out
}

// prunedMetric is hookrelay_pruned_rows_total{table}.
func prunedMetric(t *testing.T, m *metrics.Metrics, table string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "hookrelay_pruned_rows_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			if s.GetLabel()[0].GetValue() == table {
				return s.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestPruneReports: a round of the worker's pruning with no retention
// deletes nothing; with the defaults it deletes a delivery that ended 40
// days ago and its event, logs retention_pruned with the counts per table
// and counts them in hookrelay_pruned_rows_total.
func TestPruneReports(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	oldDelivery(t, st)
	var buf bytes.Buffer
	logger, m := slog.New(slog.NewJSONHandler(&buf, nil)), metrics.New()
	worker.Prune(t.Context(), st, logger, worker.Options{Metrics: m})
	if lines := prunedLines(t, &buf); len(lines) != 0 {
		t.Fatalf("without retention: %v", lines)
	}
	opts := worker.Options{Metrics: m, Retention: 720 * time.Hour, DeadLetterRetention: 2160 * time.Hour}
	worker.Prune(t.Context(), st, logger, opts)
	lines := prunedLines(t, &buf)
	if len(lines) != 1 || lines[0]["deliveries"] != 1.0 || lines[0]["events"] != 1.0 || lines[0]["attempts"] != 0.0 {
		t.Fatalf("retention_pruned lines %v, want one with 1 delivery and 1 event", lines)
	}
	if d, e := prunedMetric(t, m, "deliveries"), prunedMetric(t, m, "events"); d != 1 || e != 1 {
		t.Fatalf("hookrelay_pruned_rows_total: deliveries %v, events %v, want 1 and 1", d, e)
	}
	worker.Prune(t.Context(), st, logger, opts)
	if lines := prunedLines(t, &buf); len(lines) != 1 {
		t.Fatalf("a round with nothing to prune logged %v", lines[1:])
	}
}
