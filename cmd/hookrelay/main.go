// Command hookrelay is durable webhook delivery on Temporal. Subcommands: dev
// (everything on the embedded default), api, worker, migrate and policies.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hookrelay:", err)
		os.Exit(1)
	}
}

const usage = `usage: hookrelay <command>

commands:
  dev                  run PostgreSQL, the Temporal dev server, the worker and the API together
  api                  serve the HTTP API
  worker               run the Temporal workers
  setup [--create-namespace]
                       prepare a Temporal cluster (namespace, search attributes) and the database
  healthcheck api|worker
                       exit 0 when the API's /readyz (or the worker's /metrics) answers 200
  migrate              apply the database migrations
  policies             list the delivery policies
  policies show NAME   print a policy's full schedule
  receive [--addr A] [--fail N] [--status C]
                       a webhook receiver that prints what it gets (for trying hookrelay)

configuration (environment): DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
HOOKRELAY_HTTP_ADDR (default 127.0.0.1:8080), HOOKRELAY_DATA_DIR (default .hookrelay),
HOOKRELAY_PG_PORT, HOOKRELAY_TEMPORAL_UI_PORT, HOOKRELAY_LOG_LEVEL,
HOOKRELAY_ADMIN_KEY (required by api), HOOKRELAY_INSECURE_NO_AUTH (local trials only),
HOOKRELAY_EGRESS_ALLOW (CIDRs deliveries may reach despite the deny list),
HOOKRELAY_METRICS_TOKEN (reads the API's /metrics), HOOKRELAY_METRICS_ADDR (worker's /metrics),
TEMPORAL_TLS, TEMPORAL_TLS_CA, TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_SERVER_NAME,
TEMPORAL_API_KEY (Temporal Cloud), HOOKRELAY_WORKER_CONCURRENCY (attempts in flight per queue, 200),
OTEL_EXPORTER_OTLP_ENDPOINT (traces over OTLP; docs/tracing.md)
`

// run is the whole program, testable: it reads its arguments and
// environment through its parameters and writes only to stdout and stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "policies":
		return runPolicies(args[1:], stdout)
	case "receive":
		return runReceive(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	app, err := newApp(getenv, stdout, stderr)
	if err != nil {
		return err
	}
	defer app.stopTracing()
	switch args[0] {
	case "dev":
		return app.dev(ctx)
	case "api":
		return app.api(ctx)
	case "worker":
		return app.worker(ctx)
	case "migrate":
		return app.migrate(ctx)
	case "setup":
		return app.setup(ctx, args[1:])
	case "healthcheck":
		return app.healthcheck(ctx, args[1:])
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}
