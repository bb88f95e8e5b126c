package main

import (
	"context"
	"time"

	"github.com/hookrelay/hookrelay/tracing"
)

// startTracing exports traces when the environment names an OTLP endpoint
// (docs/tracing.md): the Temporal client, the API and the workers then trace
// through a.tracing. Otherwise a.tracing stays nil and nothing traces.
func (a *app) startTracing(ctx context.Context) error {
	t, err := tracing.Start(ctx, a.cfg.Tracing, a.logger)
	if err != nil {
		return err
	}
	a.tracing = t
	if t != nil {
		a.logger.InfoContext(ctx, "tracing_on", "protocol", a.cfg.Tracing.Protocol)
	}
	return nil
}

// stopTracing exports the spans left, for 5 seconds at most.
func (a *app) stopTracing() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.tracing.Shutdown(ctx); err != nil {
		a.logger.Warn("tracing_shutdown_failed", "error", err)
	}
}
