package activities

import (
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookrelay/hookrelay/tracing"
)

// TracedTransport is next, sending the trace context of the activity making
// a request (an attempt, an Event Grid handshake) along as a W3C traceparent
// header: the span of an attempt (Temporal's RunActivity:Deliver) is then
// the parent of the receiver's, and it is described with the attempt's
// delivery, number and outcome (docs/tracing.md). The worker uses it only
// while tracing is on (not a method: every method of Activities is an
// activity).
func TracedTransport(next http.RoundTripper) http.RoundTripper {
	return tracedTransport{next: next}
}

// tracedTransport is a RoundTripper that sends the trace context of the
// request's span along.
type tracedTransport struct{ next http.RoundTripper }

// RoundTrip sends a copy of req with the traceparent of its context's span,
// and records the request and its answer on that span.
func (t tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	span := trace.SpanFromContext(ctx)
	if !span.SpanContext().IsValid() {
		return t.next.RoundTrip(req)
	}
	req = req.Clone(ctx) // a RoundTripper leaves the request it is given alone
	tracing.Inject(ctx, req.Header)
	span.SetAttributes(requestAttributes(req)...)
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		span.SetStatus(codes.Error, errorKind(err))
		return nil, err
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
	if resp.StatusCode >= http.StatusBadRequest {
		span.SetStatus(codes.Error, resp.Status)
	}
	return resp, nil
}

// requestAttributes describe an attempt's request: its method and host (not
// its URL, whose path or query may hold a receiver's secret), and the
// delivery and attempt number its headers name.
func requestAttributes(req *http.Request) []attribute.KeyValue {
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(req.Method), semconv.ServerAddress(req.URL.Hostname())}
	if id := req.Header.Get("X-Hookrelay-Delivery"); id != "" {
		attrs = append(attrs, attribute.String("hookrelay.delivery_id", id))
	}
	if n, err := strconv.Atoi(req.Header.Get("X-Hookrelay-Attempt")); err == nil {
		attrs = append(attrs, attribute.Int("hookrelay.attempt", n))
	}
	return attrs
}
