package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// HeaderTraceParent is the W3C trace context header a publish request may
// carry and every attempt's request carries while tracing is on.
const HeaderTraceParent = "traceparent"

// Extract is ctx with the trace context of an incoming request's headers (a
// remote parent), or ctx itself when they carry none.
func Extract(ctx context.Context, h http.Header) context.Context {
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject writes the trace context of ctx's span to outgoing headers h.
func Inject(ctx context.Context, h http.Header) {
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// TraceParent is the W3C traceparent of ctx's span, "" when it has none: a
// trace context kept in memory past the request, in a delivery waiting for
// its workflow to start (store.Delivery.TraceParent).
func TraceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c[HeaderTraceParent]
}

// ContextWithParent is ctx whose span is the remote parent traceparent names
// (TraceParent), or ctx itself when traceparent is empty or malformed.
func ContextWithParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{HeaderTraceParent: traceparent})
}
