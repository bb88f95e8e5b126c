package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/tracing"
	"github.com/hookrelay/hookrelay/worker"
)

// stack is hookrelay on real servers, traced into an in-memory exporter: the
// API (with its start queue) over real HTTP, a worker on every task queue
// and a Temporal client with the tracing interceptor, as `hookrelay dev`
// runs them, on PostgreSQL and the Temporal dev server.
type stack struct {
	url    string
	client client.Client
	spans  *tracetest.InMemoryExporter
	tracer trace.Tracer
	tr     *tracing.Tracing
}

func newStack(t *testing.T) *stack {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr, err := tracing.New(tp)
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.TemporalServer(t)
	c, err := client.Dial(client.Options{HostPort: srv.Address, Namespace: srv.Namespace,
		Logger: sdklog.NewStructuredLogger(testenv.Logger()), Interceptors: tr.ClientInterceptors()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	st := testenv.Store(t)
	s := testenv.Worker(t, c, st, worker.Options{HTTPConcurrency: 4, Tracing: tr})
	a := &api.Server{Store: st, Temporal: c, Logger: testenv.Logger(), Auth: api.Auth{Open: true},
		Egress: testenv.Egress(), Starter: s, Tracing: tr}
	a.StartQueue = &starter.Queue{Starter: s}
	ctx, cancel := context.WithCancel(context.Background())
	go a.StartQueue.Run(ctx)
	hs := httptest.NewServer(api.New(a))
	t.Cleanup(func() { hs.Close(); cancel() })
	return &stack{url: hs.URL, client: c, spans: exp, tracer: tp.Tracer("publisher"), tr: tr}
}

// post POSTs body to the API at path with headers h and decodes the answer,
// failing the test unless it is a 2xx.
func (s *stack) post(t *testing.T, path, body string, h http.Header) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %s %v (%v)", path, resp.Status, out, err)
	}
	return out
}

// subscribe subscribes a new receiver to "order.created", retried after a
// second.
func (s *stack) subscribe(t *testing.T) *receiver {
	t.Helper()
	rcv := newReceiver(t)
	s.post(t, "/v1/subscriptions", `{"url": "`+rcv.URL+`/hook", "event_types": ["order.created"], "policy": "custom",
		"retry_policy": {"custom": {"kind": "fixed", "interval_seconds": 1}}}`, http.Header{})
	return rcv
}

// publish publishes event id (type "order.created") with headers h and
// waits for its one delivery's workflow to end; it returns that workflow's
// id.
func (s *stack) publish(t *testing.T, id string, h http.Header) string {
	t.Helper()
	out := s.post(t, "/v1/events", `{"id": "`+id+`", "type": "order.created", "data": {}}`, h)
	ds, _ := out["deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("publish %s: deliveries %v", id, out["deliveries"])
	}
	wf := ds[0].(map[string]any)["workflow_id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		var res map[string]any
		err := s.client.GetWorkflow(ctx, wf, "").Get(ctx, &res)
		if err == nil && res["Status"] == "delivered" {
			return wf
		}
		if err == nil || ctx.Err() != nil {
			t.Fatalf("delivery %s ended %v (%v)", wf, res, err)
		}
		time.Sleep(50 * time.Millisecond) // the start queue has not started it yet
	}
}

// receiver is a real webhook receiver that fails the first request of each
// event and accepts the next, recording each request's traceparent by
// event and attempt.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string]string // "<event id>/<attempt>" -> traceparent
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{got: map[string]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		attempt := req.Header.Get("X-Hookrelay-Attempt")
		r.mu.Lock()
		r.got[req.Header.Get("Webhook-Id")+"/"+attempt] = req.Header.Get(tracing.HeaderTraceParent)
		r.mu.Unlock()
		if attempt == "1" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// traceParent is the traceparent the receiver got for an event's attempt,
// as its trace and parent span ids.
func (r *receiver) traceParent(t *testing.T, event string, attempt int) (trace.TraceID, trace.SpanID) {
	t.Helper()
	r.mu.Lock()
	tp := r.got[fmt.Sprintf("%s/%d", event, attempt)]
	r.mu.Unlock()
	parts := strings.Split(tp, "-")
	if len(parts) != 4 {
		t.Fatalf("attempt %d of %s came with traceparent %q", attempt, event, tp)
	}
	tid, err1 := trace.TraceIDFromHex(parts[1])
	sid, err2 := trace.SpanIDFromHex(parts[2])
	if err1 != nil || err2 != nil {
		t.Fatalf("traceparent %q: %v %v", tp, err1, err2)
	}
	return tid, sid
}

// spansIn are the spans exported so far of trace id, by name.
func spansIn(exp *tracetest.InMemoryExporter, id trace.TraceID) map[string][]tracetest.SpanStub {
	m := map[string][]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID() == id {
			m[s.Name] = append(m[s.Name], s)
		}
	}
	return m
}

// one is the only span named name, failing the test unless there is one.
func one(t *testing.T, spans map[string][]tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	if len(spans[name]) != 1 {
		t.Fatalf("%d spans %q in the trace, want 1", len(spans[name]), name)
	}
	return spans[name][0]
}

// intAttr is the value of a span's int attribute key (-1 without it).
func intAttr(s tracetest.SpanStub, key attribute.Key) int64 {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.AsInt64()
		}
	}
	return -1
}

// TestOneTracePublishToReceiver: issue 24. A publish request carrying a
// traceparent, its delivery's workflow (started by the API's start queue,
// eagerly), the delivery's two attempts (the first a local activity that the
// receiver fails, the second a regular activity after a durable timer) and
// the receiver's requests make one trace: the receiver gets the publisher's
// trace id, each attempt's span is the parent of its request, and the two
// attempt spans are siblings under the delivery's workflow span.
func TestOneTracePublishToReceiver(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rcv := s.subscribe(t)
	ctx, pub := s.tracer.Start(context.Background(), "publisher", trace.WithSpanKind(trace.SpanKindClient))
	h := http.Header{}
	tracing.Inject(ctx, h)
	wf := s.publish(t, "ord-1", h)
	pub.End()
	id := pub.SpanContext().TraceID()
	for _, sp := range s.spans.GetSpans() {
		if sp.SpanContext.TraceID() != id && sp.Name != "POST /v1/subscriptions" {
			t.Errorf("span %s is in trace %s, not the publisher's %s", sp.Name, sp.SpanContext.TraceID(), id)
		}
	}
	spans := spansIn(s.spans, id)
	server := one(t, spans, "POST /v1/events")
	start := one(t, spans, "StartWorkflow:Delivery")
	run := one(t, spans, "RunWorkflow:Delivery")
	for _, edge := range []struct {
		child  tracetest.SpanStub
		parent trace.SpanID
	}{{server, pub.SpanContext().SpanID()}, {start, server.SpanContext.SpanID()}, {run, start.SpanContext.SpanID()}} {
		if got := edge.child.Parent.SpanID(); got != edge.parent {
			t.Errorf("%s: parent %s, want %s", edge.child.Name, got, edge.parent)
		}
	}
	attempts := spans["RunActivity:Deliver"]
	if len(attempts) != 2 {
		t.Fatalf("%d attempt spans, want 2", len(attempts))
	}
	for _, a := range attempts {
		n := intAttr(a, "hookrelay.attempt")
		if a.Parent.SpanID() != run.SpanContext.SpanID() {
			t.Errorf("attempt %d: parent %s, want the workflow's span %s: not siblings", n, a.Parent.SpanID(), run.SpanContext.SpanID())
		}
		tid, parent := rcv.traceParent(t, "ord-1", int(n))
		if tid != id || parent != a.SpanContext.SpanID() {
			t.Errorf("attempt %d: the receiver got trace %s parent %s, want %s %s", n, tid, parent, id, a.SpanContext.SpanID())
		}
	}
	if a, b := intAttr(attempts[0], "hookrelay.attempt"), intAttr(attempts[1], "hookrelay.attempt"); a+b != 3 || a*b != 2 {
		t.Errorf("attempt spans numbered %d and %d, want 1 and 2", a, b)
	}
	hist := testenv.History(t, s.client, wf)
	if local, deliver := activityKinds(hist); local == 0 || deliver != 1 {
		t.Errorf("%d local activities and %d Deliver activities, want the first attempt local and the retry regular", local, deliver)
	}
	replay(t, hist, s.tr)
}

// TestPublishWithoutTraceParent: a publish request with no traceparent
// starts a new trace, which its delivery joins as one with does.
func TestPublishWithoutTraceParent(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rcv := s.subscribe(t)
	s.publish(t, "ord-2", http.Header{})
	var server *tracetest.SpanStub
	for _, sp := range s.spans.GetSpans() {
		if sp.Name == "POST /v1/events" {
			server = &sp
		}
	}
	if server == nil || server.Parent.IsValid() {
		t.Fatalf("publish span %+v, want a root span", server)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		if tid, _ := rcv.traceParent(t, "ord-2", attempt); tid != server.SpanContext.TraceID() {
			t.Errorf("attempt %d: the receiver got trace %s, want the publish's %s", attempt, tid, server.SpanContext.TraceID())
		}
	}
	run := one(t, spansIn(s.spans, server.SpanContext.TraceID()), "RunWorkflow:Delivery")
	if run.Parent.TraceID() != server.SpanContext.TraceID() {
		t.Errorf("the workflow's span is in trace %s, not the publish's", run.SpanContext.TraceID())
	}
}
