package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/azstorage"
	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/egress"
	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/tracing"
	"github.com/hookrelay/hookrelay/worker"
)

// app holds the configuration and output of one run.
type app struct {
	cfg     config.Config
	logger  *slog.Logger
	stdout  io.Writer
	metrics *metrics.Metrics
	// tls is the API's certificate (loadTLS); nil serves plain HTTP.
	tls *tls.Config
	// tracing is nil unless traces are exported (startTracing).
	tracing *tracing.Tracing
	// storage are the Azure storage accounts dead letters are written to.
	storage *azstorage.Accounts
	// firsts hands first attempts from this process's API to its worker
	// (store.FirstAttempts); nil when it runs no worker beside its API.
	firsts *store.FirstAttempts
	// shares bound this process's local first attempts, the same for its
	// worker and for its API's start queue, which asks them which
	// endpoints are in trouble (starter.Queue.Troubled).
	shares *activities.Shares
}

func newApp(getenv func(string) string, stdout, stderr io.Writer) (*app, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	storage, err := azstorage.New(cfg.DeadLetterBlobs.ConnectionStrings, cfg.DeadLetterBlobs.EntraAccounts)
	if err != nil {
		return nil, err
	}
	shares := worker.Options{HTTPConcurrency: cfg.WorkerConcurrency, FirstAttemptsPerEndpoint: cfg.FirstAttemptsPerEndpoint}.NewShares()
	return &app{cfg: cfg, logger: logger, stdout: stdout, metrics: metrics.New(), storage: storage, shares: shares}, nil
}

// connect opens the store (applying migrations) and the Temporal client.
func (a *app) connect(ctx context.Context) (*store.Store, client.Client, error) {
	if a.cfg.DatabaseURL == "" {
		return nil, nil, errors.New("DATABASE_URL is not set (use `hookrelay dev` for the embedded default)")
	}
	if a.cfg.Encryption.Keys == nil {
		return nil, nil, errNoEncryptionKey
	}
	if err := a.startTracing(ctx); err != nil {
		return nil, nil, err
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err = st.Migrate(ctx); err == nil {
		err = a.useKeys(ctx, st)
	}
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	c, err := a.dialTemporal(ctx)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	if err := checkSetUp(ctx, c, a.cfg.TemporalNamespace); err != nil {
		c.Close()
		_ = st.Close()
		return nil, nil, err
	}
	return st, c, nil
}

// openDatabase opens the store of DATABASE_URL for a command of its own
// (migrate), which needs no Temporal.
func (a *app) openDatabase(ctx context.Context) (*store.Store, error) {
	if a.cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is not set")
	}
	return a.openStore(ctx)
}

// openStore opens the store of DATABASE_URL with the connections
// HOOKRELAY_DB_CONNECTIONS allows.
func (a *app) openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, a.cfg.DatabaseURL)
	if err == nil {
		st.SetConnections(a.cfg.DBConnections)
	}
	return st, err
}

func (a *app) migrate(ctx context.Context) error {
	st, err := a.openDatabase(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, "migrations applied")
	if a.cfg.Encryption.Keys != nil {
		st.UseKeys(a.cfg.Encryption.Keys)
		return a.sealPlain(ctx, st)
	}
	return nil
}

// migrateDown undoes the migrations newer than version.
func (a *app) migrateDown(ctx context.Context, version int64) error {
	st, err := a.openDatabase(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.MigrateDownTo(ctx, version); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "migrations newer than %d undone\n", version)
	return nil
}

func (a *app) worker(ctx context.Context) error {
	st, c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer c.Close()
	a.metrics.WithPool("worker", st.DB().DB)
	if err := a.serveWorkerMetrics(ctx); err != nil {
		return err
	}
	return worker.Run(ctx, c, st, a.logger, a.workerOptions(false))
}

func (a *app) api(ctx context.Context) error {
	auth, err := a.apiAuth()
	if err != nil {
		return err
	}
	if err := a.loadTLS(); err != nil {
		return err
	}
	if a.cfg.APIWorker {
		a.firsts = store.NewFirstAttempts()
	}
	st, c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer c.Close()
	if a.cfg.APIWorker {
		// Eager start: the deliveries this API starts begin in this worker,
		// which makes their first attempt (worker.Options.MainQueueOnly).
		opts := a.workerOptions(false)
		opts.MainQueueOnly, opts.SweepInterval = true, 0
		// Its publishes hand their first attempts over to it
		// (store.FirstAttempts).
		st.ShareFirstAttempts(a.firsts)
		stop, err := worker.Start(ctx, c, st, a.logger, opts)
		if err != nil {
			return err
		}
		defer stop()
	}
	return a.serve(ctx, st, c, auth, a.guard(false))
}

// serve runs the HTTP API until ctx ends, then shuts it down gracefully.
func (a *app) serve(ctx context.Context, st *store.Store, c client.Client, auth api.Auth, g *egress.Guard) error {
	a.metrics.WithSource(st, a.logger)
	a.metrics.WithPool("api", st.DB().DB)
	srv := &api.Server{Store: st, Temporal: c, Logger: a.logger, Auth: auth, Egress: g, Metrics: a.metrics, Tracing: a.tracing,
		Storage: a.storage,
		Starter: &starter.Starter{Store: st, Temporal: c, Logger: a.logger, Defaults: a.cfg.EdgeDefaults, Metrics: a.metrics},
		Console: console.Settings{PublicURL: a.cfg.PublicURL, TemporalUI: a.cfg.TemporalUIURL, Namespace: a.cfg.TemporalNamespace}}
	srv.StartQueue = &starter.Queue{Starter: srv.Starter, PerEndpoint: a.cfg.StartsPerEndpoint, Troubled: a.shares.Troubled,
		TroubledPerSecond: a.cfg.TroubledStartsPerSecond}
	srv.PublishesPerType = a.cfg.PublishesPerType
	go srv.StartQueue.Run(ctx)
	hs := &http.Server{Handler: api.New(srv), ReadHeaderTimeout: 10 * time.Second}
	ln, err := a.listen()
	if err != nil {
		return err
	}
	a.logger.InfoContext(ctx, "api_listening", "addr", ln.Addr().String(), "scheme", a.scheme())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("api: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return hs.Shutdown(shutCtx)
}
