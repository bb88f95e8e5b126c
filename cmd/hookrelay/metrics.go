package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// serveWorkerMetrics serves /metrics on HOOKRELAY_METRICS_ADDR, if set, until
// ctx ends. The address is the operator's choice: keep it off the internet
// (it answers without credentials, as Prometheus exporters do).
func (a *app) serveWorkerMetrics(ctx context.Context) error {
	if a.cfg.Metrics.Addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.Metrics.Addr)
	if err != nil {
		return fmt.Errorf("worker metrics: listen on %s: %w", a.cfg.Metrics.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("worker_metrics_stopped", "error", err)
		}
	}()
	a.logger.InfoContext(ctx, "worker_metrics_listening", "addr", ln.Addr().String())
	return nil
}
