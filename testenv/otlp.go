package testenv

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector is a real OTLP/HTTP trace collector on loopback, decoding what
// it receives with the protocol's own definitions: set
// OTEL_EXPORTER_OTLP_ENDPOINT to its URL.
type Collector struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*coltracepb.ExportTraceServiceRequest
}

// OTLPCollector starts a Collector, stopped when the test ends.
func OTLPCollector(t testing.TB) *Collector {
	c := &Collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(c.export))
	t.Cleanup(c.Close)
	return c
}

// export takes one export request (POST /v1/traces, protobuf).
func (c *Collector) export(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	req := &coltracepb.ExportTraceServiceRequest{}
	if r.URL.Path != "/v1/traces" || err != nil || proto.Unmarshal(b, req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.requests = append(c.requests, req)
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Requests are the export requests received so far.
func (c *Collector) Requests() []*coltracepb.ExportTraceServiceRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*coltracepb.ExportTraceServiceRequest(nil), c.requests...)
}

// Spans are the spans received so far, of every resource and scope.
func (c *Collector) Spans() []*tracepb.Span {
	var spans []*tracepb.Span
	for _, req := range c.Requests() {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				spans = append(spans, ss.GetSpans()...)
			}
		}
	}
	return spans
}
