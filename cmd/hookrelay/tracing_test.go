package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/testenv"
)

// publisherTrace is the trace (and parent span) of the test's publish
// request: the W3C specification's example.
const (
	publisherTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	publisherSpan  = "00f067aa0ba902b7"
)

// TestAPITraces: issue 24. `hookrelay api` with an OTLP endpoint in its
// environment traces a publication end to end: the receiver gets a
// traceparent in the publisher's trace, and at exit the collector has the
// API's span, the workflow's and the attempt's, the attempt's being the
// parent the receiver was given.
func TestAPITraces(t *testing.T) {
	col := testenv.OTLPCollector(t)
	t.Setenv(config.EnvOTLPEndpoint, col.URL) // the exporter reads it from the process
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := make(chan string, 1)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
	}))
	defer rcv.Close()
	base, ns, stop := runAPI(ctx, t, map[string]string{config.EnvOTLPEndpoint: col.URL})
	post(t, base+"/v1/subscriptions", `{"url": "`+rcv.URL+`/hook", "event_types": ["a"], "policy": "eventgrid"}`)
	wf := publishTraced(t, base)
	parent := receivedParent(ctx, t, got)
	awaitWorkflow(ctx, t, ns, wf)
	if err := stop(); err != nil { // exports the spans left
		t.Fatal(err)
	}
	checkCollected(t, col, parent)
}

// publishTraced publishes an event in the publisher's trace and returns its
// delivery's workflow id.
func publishTraced(t *testing.T, base string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/events", strings.NewReader(`{"id": "ev-1", "type": "a", "data": {}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+publisherTrace+"-"+publisherSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Deliveries []struct {
			WorkflowID string `json:"workflow_id"`
		} `json:"deliveries"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Deliveries) != 1 {
		t.Fatalf("publish: %s %+v (%v)", resp.Status, out, err)
	}
	return out.Deliveries[0].WorkflowID
}

// receivedParent is the parent span id of the traceparent the receiver got,
// failing the test unless it is in the publisher's trace.
func receivedParent(ctx context.Context, t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case tp := <-got:
		parts := strings.Split(tp, "-")
		if len(parts) != 4 || parts[1] != publisherTrace {
			t.Fatalf("the receiver got traceparent %q, want one in trace %s", tp, publisherTrace)
		}
		return parts[2]
	case <-ctx.Done():
		t.Fatal("no attempt reached the receiver")
		return ""
	}
}

// awaitWorkflow waits for a workflow to close, so that all its spans ended.
func awaitWorkflow(ctx context.Context, t *testing.T, ns, id string) {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: testenv.TemporalServer(t).Address, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatalf("workflow %s: %v", id, err)
	}
}

// checkCollected fails the test unless the collector got the publication's
// spans in the publisher's trace, the attempt's span being parent.
func checkCollected(t *testing.T, col *testenv.Collector, parent string) {
	t.Helper()
	names := map[string]string{}
	for _, s := range col.Spans() {
		if hex.EncodeToString(s.GetTraceId()) == publisherTrace {
			names[s.GetName()] = hex.EncodeToString(s.GetSpanId())
		}
	}
	for _, name := range []string{"POST /v1/events", "StartWorkflow:Delivery", "RunWorkflow:Delivery", "RunActivity:Deliver"} {
		if names[name] == "" {
			t.Errorf("no span %q in the publisher's trace; got %v", name, names)
		}
	}
	if names["RunActivity:Deliver"] != parent {
		t.Errorf("the receiver's parent is span %s, not the attempt's %s", parent, names["RunActivity:Deliver"])
	}
}
