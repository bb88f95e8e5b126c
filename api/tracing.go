package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/tracing"
)

// untraced are the routes no span is made for: health checks, scrapes and
// profiles.
var untraced = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/debug/pprof/*": true}

// traceRequests makes a request a server span (docs/tracing.md): the child of
// the caller's span when the request carries a W3C traceparent, the root of
// a new trace otherwise. What the request starts (a publication's
// deliveries, a redrive) joins that trace. It is installed only while
// tracing is on.
func (s *Server) traceRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		route := c.Path()
		if untraced[route] {
			return next(c)
		}
		req := c.Request()
		ctx, span := s.Tracing.Tracer().Start(tracing.Extract(req.Context(), req.Header), req.Method+" "+route,
			trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(semconv.HTTPRequestMethodKey.String(req.Method), semconv.HTTPRoute(route)))
		defer span.End()
		c.SetRequest(req.WithContext(ctx))
		err := next(c)
		status := c.Response().Status
		if err != nil {
			status = toAPIError(err).Status
		}
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		if id := account(c); id != "" {
			span.SetAttributes(attribute.String("hookrelay.account_id", id))
		}
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		return err
	}
}

// withTraceParent gives deliveries handed to the start queue the trace
// context of ctx, so that their workflows join the request's trace however
// late they start (starter.Starter). Nothing is done while tracing is off.
func (s *Server) withTraceParent(ctx context.Context, ds []store.Delivery) []store.Delivery {
	if s.Tracing == nil {
		return ds
	}
	tp := tracing.TraceParent(ctx)
	for i := range ds {
		ds[i].TraceParent = tp
	}
	return ds
}
