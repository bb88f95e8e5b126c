package config_test

import (
	"testing"

	"github.com/hookrelay/hookrelay/config"
)

// TestTracing: tracing is off unless an OTLP endpoint is set (and the SDK is
// not disabled); it speaks http/protobuf unless grpc is asked for, the
// traces' own protocol first; any other protocol stops the start.
func TestTracing(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want config.Tracing
	}{
		{"nothing set", nil, config.Tracing{Protocol: config.ProtocolHTTP}},
		{"protocol alone", map[string]string{config.EnvOTLPProtocol: "grpc"}, config.Tracing{Protocol: config.ProtocolHTTP}},
		{"endpoint", map[string]string{config.EnvOTLPEndpoint: "http://127.0.0.1:4318"},
			config.Tracing{On: true, Protocol: config.ProtocolHTTP}},
		{"traces endpoint", map[string]string{config.EnvOTLPTracesEndpoint: "http://127.0.0.1:4318/v1/traces"},
			config.Tracing{On: true, Protocol: config.ProtocolHTTP}},
		{"disabled", map[string]string{config.EnvOTLPEndpoint: "http://127.0.0.1:4318", config.EnvOTelSDKDisabled: "TRUE"},
			config.Tracing{Protocol: config.ProtocolHTTP}},
		{"grpc", map[string]string{config.EnvOTLPEndpoint: "http://127.0.0.1:4317", config.EnvOTLPProtocol: "grpc"},
			config.Tracing{On: true, Protocol: config.ProtocolGRPC}},
		{"traces protocol first", map[string]string{config.EnvOTLPEndpoint: "http://127.0.0.1:4317",
			config.EnvOTLPProtocol: "http/protobuf", config.EnvOTLPTracesProtocol: "grpc"},
			config.Tracing{On: true, Protocol: config.ProtocolGRPC}},
	} {
		cfg, err := config.Load(func(k string) string { return c.env[k] })
		if err != nil || cfg.Tracing != c.want {
			t.Errorf("%s: %+v (%v), want %+v", c.name, cfg.Tracing, err, c.want)
		}
	}
	for _, name := range []string{config.EnvOTLPProtocol, config.EnvOTLPTracesProtocol} {
		env := map[string]string{config.EnvOTLPEndpoint: "http://127.0.0.1:4318", name: "http/json"}
		if _, err := config.Load(func(k string) string { return env[k] }); err == nil {
			t.Errorf("%s=http/json loaded", name)
		}
	}
}
