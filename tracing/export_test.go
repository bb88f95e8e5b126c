package tracing_test

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/tracing"
)

// TestExportsOverOTLP: with an OTLP endpoint in the environment, Start
// exports hookrelay's spans there with the official exporter, over
// http/protobuf or grpc as OTEL_EXPORTER_OTLP_PROTOCOL says, as service
// "hookrelay"; without one it starts nothing. The collectors are real
// servers of the OTLP protocol's own definitions.
func TestExportsOverOTLP(t *testing.T) {
	for _, name := range []string{config.EnvOTLPEndpoint, config.EnvOTLPTracesEndpoint, config.EnvOTLPTracesProtocol, config.EnvOTelSDKDisabled} {
		t.Setenv(name, "")
	}
	if tr := start(t); tr != nil || len(tr.ClientInterceptors()) != 0 {
		t.Fatalf("tracing on without an OTLP endpoint: %+v", tr)
	}
	for protocol, collector := range map[string]func(*testing.T) (string, func() []*coltracepb.ExportTraceServiceRequest){
		config.ProtocolHTTP: httpCollector, config.ProtocolGRPC: grpcCollector,
	} {
		t.Run(protocol, func(t *testing.T) {
			endpoint, got := collector(t)
			t.Setenv(config.EnvOTLPEndpoint, endpoint)
			t.Setenv(config.EnvOTLPProtocol, protocol)
			tr := start(t)
			if tr == nil || len(tr.ClientInterceptors()) != 1 {
				t.Fatalf("tracing off with %s set", config.EnvOTLPEndpoint)
			}
			_, span := tr.Tracer().Start(context.Background(), "exported")
			span.End()
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			reqs := got()
			if len(reqs) != 1 {
				t.Fatalf("Shutdown returned and the collector got %d requests, want 1", len(reqs))
			}
			checkExported(t, reqs[0])
		})
	}
}

// start starts tracing as `hookrelay` does, from the environment.
func start(t *testing.T) *tracing.Tracing {
	t.Helper()
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tracing.Start(context.Background(), cfg.Tracing, testenv.Logger())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// checkExported fails the test unless req holds the span "exported" of the
// service "hookrelay".
func checkExported(t *testing.T, req *coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	rs := req.GetResourceSpans()
	if len(rs) != 1 || len(rs[0].GetScopeSpans()) != 1 || len(rs[0].GetScopeSpans()[0].GetSpans()) != 1 {
		t.Fatalf("exported %v", req)
	}
	if name := rs[0].GetScopeSpans()[0].GetSpans()[0].GetName(); name != "exported" {
		t.Errorf("exported span %q", name)
	}
	service := ""
	for _, kv := range rs[0].GetResource().GetAttributes() {
		if kv.GetKey() == "service.name" {
			service = kv.GetValue().GetStringValue()
		}
	}
	if service != tracing.ServiceName {
		t.Errorf("service.name %q, want %q", service, tracing.ServiceName)
	}
}

// httpCollector is an OTLP/HTTP collector: its endpoint, and what it got.
func httpCollector(t *testing.T) (string, func() []*coltracepb.ExportTraceServiceRequest) {
	c := testenv.OTLPCollector(t)
	return c.URL, c.Requests
}

// traceService is the trace service of an OTLP/gRPC collector.
type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	mu  sync.Mutex
	got []*coltracepb.ExportTraceServiceRequest
}

func (s *traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (s *traceService) requests() []*coltracepb.ExportTraceServiceRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*coltracepb.ExportTraceServiceRequest(nil), s.got...)
}

// grpcCollector is an OTLP/gRPC collector: its endpoint, and what it got.
func grpcCollector(t *testing.T) (string, func() []*coltracepb.ExportTraceServiceRequest) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, svc := grpc.NewServer(), &traceService{}
	coltracepb.RegisterTraceServiceServer(srv, svc)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return "http://" + ln.Addr().String(), svc.requests
}
