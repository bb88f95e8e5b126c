// Package tracing is hookrelay's OpenTelemetry tracing (docs/tracing.md): the
// W3C trace context of a publish request carried through the Delivery
// workflow by Temporal's tracing interceptor to a span per attempt, whose
// context the receiver gets as a traceparent header; exported over OTLP.
//
// Tracing is off unless an OTLP endpoint is configured, and off it costs
// nothing: Start returns a nil *Tracing, whose methods add no interceptor
// and no middleware, and callers check for nil before doing any work per
// request or delivery.
package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/hookrelay/hookrelay/config"
)

// ServiceName is the service.name of hookrelay's spans unless
// OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names another.
const ServiceName = "hookrelay"

// instrumentation names the tracer of hookrelay's own spans.
const instrumentation = "github.com/hookrelay/hookrelay"

// propagator reads and writes W3C traceparent (and tracestate) headers. No
// baggage: a publisher's baggage is not passed on to receivers.
var propagator = propagation.TraceContext{}

// Tracing holds a tracer provider and the Temporal interceptor that traces
// through it. A nil *Tracing is tracing off.
type Tracing struct {
	tracer      trace.Tracer
	interceptor interceptor.Interceptor
	shutdown    func(context.Context) error
}

// Start exports traces over OTLP as cfg says, or returns nil when tracing is
// off. The exporter reads the rest of its settings from the OTEL_EXPORTER_OTLP_*
// variables; the resource reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES;
// the provider reads OTEL_TRACES_SAMPLER and the batcher OTEL_BSP_*. Export
// errors go to logger.
func Start(ctx context.Context, cfg config.Tracing, logger *slog.Logger) (*Tracing, error) {
	if !cfg.On {
		return nil, nil
	}
	exp, err := exporter(ctx, cfg.Protocol)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName(ServiceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing_failed", "error", err)
	}))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t, err := New(tp)
	if err != nil {
		_ = tp.Shutdown(ctx)
		return nil, err
	}
	t.shutdown = tp.Shutdown
	return t, nil
}

// exporter is the OTLP trace exporter of protocol, configured from the
// environment.
func exporter(ctx context.Context, protocol string) (sdktrace.SpanExporter, error) {
	if protocol == config.ProtocolGRPC {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

// New is tracing through tp, which the caller shuts down (tests give a
// provider with an in-memory exporter).
func New(tp trace.TracerProvider) (*Tracing, error) {
	i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            tp.Tracer("temporal-sdk-go"),
		TextMapPropagator: propagator,
		DisableBaggage:    true,
		SpanStarter:       startSpan,
	})
	if err != nil {
		return nil, fmt.Errorf("tracing: temporal interceptor: %w", err)
	}
	return &Tracing{tracer: tp.Tracer(instrumentation), interceptor: i}, nil
}

// startSpan starts the spans of Temporal's interceptor but for the
// StartActivity ones, which it leaves out: an activity's span (RunActivity)
// is then a child of its workflow's (RunWorkflow), so that a delivery's
// attempts are siblings under it, the gaps between them its backoff. The
// span returned in their place is the non-recording parent the interceptor
// passed in; the interceptor writes its context to the activity's header
// and ends it, which does nothing.
func startSpan(ctx context.Context, t trace.Tracer, name string, opts ...trace.SpanStartOption) trace.Span {
	if strings.HasPrefix(name, "StartActivity:") {
		return trace.SpanFromContext(ctx)
	}
	_, span := t.Start(ctx, name, opts...)
	return span
}

// ClientInterceptors are the interceptors of a Temporal client that traces:
// the workers made from that client trace too. None when t is nil.
func (t *Tracing) ClientInterceptors() []interceptor.ClientInterceptor {
	if t == nil {
		return nil
	}
	return []interceptor.ClientInterceptor{t.interceptor}
}

// Interceptors are the worker interceptors of a workflow replayer that
// traces as a worker does. None when t is nil.
func (t *Tracing) Interceptors() []interceptor.WorkerInterceptor {
	if t == nil {
		return nil
	}
	return []interceptor.WorkerInterceptor{t.interceptor}
}

// Tracer is the tracer of hookrelay's own spans.
func (t *Tracing) Tracer() trace.Tracer { return t.tracer }

// Shutdown exports what is left and stops exporting; nothing to do when t is
// nil or was made by New.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}
