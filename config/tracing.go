package config

import (
	"fmt"
	"strings"
)

// Environment variables of tracing (docs/tracing.md). They are the
// OpenTelemetry SDK's own: hookrelay reads these to decide whether to trace
// and over which protocol; the OTLP exporter reads the rest of its settings
// (headers, timeout, certificates) itself.
const (
	EnvOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvOTLPProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvOTLPTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvOTelSDKDisabled    = "OTEL_SDK_DISABLED"
)

// OTLP protocols hookrelay's exporter speaks.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Tracing says whether traces are exported over OTLP, and how.
type Tracing struct {
	// On is true when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT
	// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and OTEL_SDK_DISABLED is not
	// true. Off, hookrelay adds no tracing at all.
	On bool
	// Protocol is ProtocolHTTP (the default) or ProtocolGRPC, from
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or else OTEL_EXPORTER_OTLP_PROTOCOL.
	Protocol string
}

func (c *Config) loadTracing(getenv func(string) string) error {
	endpoint := strings.TrimSpace(getenv(EnvOTLPTracesEndpoint)) != "" || strings.TrimSpace(getenv(EnvOTLPEndpoint)) != ""
	disabled := strings.EqualFold(strings.TrimSpace(getenv(EnvOTelSDKDisabled)), "true")
	c.Tracing = Tracing{On: endpoint && !disabled, Protocol: ProtocolHTTP}
	if !c.Tracing.On {
		return nil
	}
	name := EnvOTLPTracesProtocol
	p := strings.TrimSpace(getenv(name))
	if p == "" {
		name, p = EnvOTLPProtocol, strings.TrimSpace(getenv(EnvOTLPProtocol))
	}
	switch p {
	case "", ProtocolHTTP:
	case ProtocolGRPC:
		c.Tracing.Protocol = ProtocolGRPC
	default:
		return fmt.Errorf("config: %s=%q: want %s or %s", name, p, ProtocolHTTP, ProtocolGRPC)
	}
	return nil
}
