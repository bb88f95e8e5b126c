package api

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

// scrape reads a /metrics page: each sample's value by its name and labels
// as Prometheus writes them ("name{a=\"x\"}").
func scrape(t *testing.T, page string) map[string]float64 {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(page))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := model.LabelSet{}
			for _, l := range m.GetLabel() {
				labels[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
			}
			key := name
			if len(labels) > 0 {
				key += labels.String()
			}
			switch {
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestMetricsMatchTheDatabase: issue 15. Three real deliveries through the
// API and a real worker (one delivered at once, one after a retry, one
// dead-lettered), then /metrics on the API (with the metrics token) and on
// the worker: every counter equals what PostgreSQL holds.
func TestMetricsMatchTheDatabase(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	apiM, workerM := metrics.New(), metrics.New()
	apiM.WithSource(st, testenv.Logger())
	testenv.Worker(t, workerClient(t, workerM), st, worker.Options{HTTPConcurrency: 10, Metrics: workerM})
	e := validated(t, &Server{Store: st, Temporal: c, Logger: testenv.Logger(), Starter: testenv.Starter(t, c, st),
		Auth: Auth{AdminKey: testAdminKey, MetricsToken: "scrape-token"}, Egress: testenv.Egress(), Metrics: apiM})
	ws := httptest.NewServer(workerM.Handler())
	t.Cleanup(ws.Close)
	key := metricsAccountKey(t, e)
	ok, flaky, down := newReceiver(t), newReceiver(t, 500), newReceiver(t, 500, 500, 500)
	policy := `"policy": "custom", "retry_policy": {"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 2, "dead_lettering": true}`
	for i, r := range []*receiver{ok, flaky, down} {
		typ := []string{"m.ok", "m.flaky", "m.down"}[i]
		if code, out := send(t, e, http.MethodPost, "/v1/subscriptions", key,
			`{"url": "`+r.URL+`", "event_types": ["`+typ+`"], `+policy+`}`); code != http.StatusCreated {
			t.Fatalf("subscribe: %d %v", code, out)
		}
		if code, out := send(t, e, http.MethodPost, "/v1/events", key, `{"type": "`+typ+`", "data": {}}`); code != http.StatusAccepted {
			t.Fatalf("publish: %d %v", code, out)
		}
	}
	waitFor(t, "three deliveries ended", time.Minute, func() bool {
		var open int
		_ = st.DB().Get(&open, `SELECT count(*) FROM deliveries WHERE finished_at IS NULL`)
		return open == 0
	})
	page := func(url, auth string) map[string]float64 {
		req := httptest.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
		}
		return scrape(t, rec.Body.String())
	}
	// A worker counts a delivery's end just after committing it: give the
	// counters a moment to catch up with the rows before comparing.
	var mismatches []string
	for range 50 {
		if mismatches = checkMetrics(t, st, page("/metrics", "Bearer scrape-token"), scrapeURL(t, ws.URL+"/metrics")); len(mismatches) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, m := range mismatches {
		t.Error(m)
	}
	if code, _ := send(t, e, http.MethodGet, "/v1/subscriptions", "Bearer scrape-token", ""); code != http.StatusForbidden {
		t.Errorf("the metrics token on /v1/subscriptions: %d, want 403", code)
	}
}

// workerClient is a Temporal client reporting the SDK's metrics into m, as
// `hookrelay worker` dials it.
func workerClient(t *testing.T, m *metrics.Metrics) client.Client {
	t.Helper()
	mh, closer := m.TemporalHandler()
	srv := testenv.TemporalServer(t)
	c, err := client.Dial(client.Options{HostPort: srv.Address, Namespace: srv.Namespace, MetricsHandler: mh,
		Logger: sdklog.NewStructuredLogger(testenv.Logger())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); _ = closer.Close() })
	return c
}

// metricsAccountKey is an API key of the default account.
func metricsAccountKey(t *testing.T, e *echo.Echo) string {
	t.Helper()
	code, key := send(t, e, http.MethodPost, "/v1/accounts/"+store.DefaultAccount+"/keys", "Bearer "+testAdminKey, `{"name": "m"}`)
	if code != http.StatusCreated {
		t.Fatalf("key: %d %v", code, key)
	}
	return "Bearer " + key["key"].(string)
}

// scrapeURL GETs a worker's /metrics.
func scrapeURL(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return scrape(t, string(b))
}

// checkMetrics compares the scraped pages with counts from PostgreSQL and
// says where they differ.
func checkMetrics(t *testing.T, st *store.Store, apiPage, workerPage map[string]float64) (mismatches []string) {
	t.Helper()
	count := func(query string) float64 {
		var n int
		if err := st.DB().Get(&n, query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return float64(n)
	}
	sum := func(page map[string]float64, prefix string) (total float64) {
		for k, v := range page {
			if strings.HasPrefix(k, prefix) {
				total += v
			}
		}
		return total
	}
	user := `type NOT LIKE 'hookrelay.%'`
	want := []struct {
		what      string
		got, want float64
	}{
		{"api events published", apiPage["hookrelay_events_published_total"], count(`SELECT count(*) FROM events WHERE ` + user)},
		{"api dead letters stored", apiPage["hookrelay_dead_letters_stored"], count(`SELECT count(*) FROM dead_letters`)},
		{"api endpoints enabled", apiPage[`hookrelay_endpoints{state="enabled"}`], count(`SELECT count(*) FROM endpoints WHERE state = 'enabled'`)},
		{"worker attempts", sum(workerPage, "hookrelay_attempts_total"), count(`SELECT count(*) FROM attempts`)},
		{"worker successes", sum(workerPage, `hookrelay_attempts_total{error_kind="none", outcome="success"}`), count(`SELECT count(*) FROM attempts WHERE success`)},
		{"worker delivered", workerPage[`hookrelay_deliveries_finished_total{policy="custom", status="delivered"}`],
			count(`SELECT count(*) FROM deliveries WHERE status = 'delivered'`)},
		{"worker dead-lettered", workerPage[`hookrelay_deliveries_finished_total{policy="custom", status="dead_lettered"}`],
			count(`SELECT count(*) FROM deliveries WHERE status = 'dead_lettered'`)},
		{"worker dead letters", workerPage["hookrelay_dead_letters_total"], count(`SELECT count(*) FROM dead_letters`)},
		{"worker first attempts", workerPage["hookrelay_first_attempt_lag_seconds_count"], count(`SELECT count(*) FROM attempts WHERE attempt = 0`)},
		{"worker publish to delivered", workerPage["hookrelay_publish_to_delivered_seconds_count"],
			count(`SELECT count(*) FROM deliveries WHERE status = 'delivered'`)},
		{"worker operational", workerPage[`hookrelay_operational_events_total{type="hookrelay.delivery.dead_lettered"}`],
			count(`SELECT count(*) FROM events WHERE type = 'hookrelay.delivery.dead_lettered'`)},
	}
	for _, w := range want {
		if w.got != w.want || w.want == 0 {
			mismatches = append(mismatches, fmt.Sprintf("%s: /metrics says %v, the database %v (want equal, not 0)", w.what, w.got, w.want))
		}
	}
	if sum(apiPage, "hookrelay_http_requests_total") == 0 || sum(workerPage, "temporal_") == 0 {
		mismatches = append(mismatches, fmt.Sprintf("no HTTP metrics on the API (%v) or no Temporal SDK metrics on the worker (%v)",
			sum(apiPage, "hookrelay_http_requests_total"), sum(workerPage, "temporal_")))
	}
	return mismatches
}
