package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// dev runs everything on the embedded default: a project-local PostgreSQL
// cluster (unless DATABASE_URL is set), the Temporal dev server with its Web
// UI and a SQLite file, the worker and the API. Data lives in DataDir, so a
// second run finds everything the first one stored.
func (a *app) dev(ctx context.Context) error {
	auth, err := a.devAuth()
	if err != nil {
		return err
	}
	if err := a.loadTLS(); err != nil {
		return err
	}
	dataDir, stopPG, err := a.startDevPostgres(ctx)
	if err != nil {
		return err
	}
	defer stopPG()
	if err := a.devKeys(dataDir); err != nil {
		return err
	}
	tmp, err := a.startTemporal(ctx, dataDir)
	if err != nil {
		return err
	}
	defer tmp.Stop()
	a.firsts = store.NewFirstAttempts()
	st, c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer c.Close()
	// The API has a connection pool of its own, as `hookrelay api` apart
	// has: a publish never waits for a connection the worker holds.
	apiStore, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer apiStore.Close()
	apiStore.UseKeys(a.cfg.Encryption.Keys)
	// The API's publishes hand their first attempts over to this
	// process's worker (store.FirstAttempts).
	st.ShareFirstAttempts(a.firsts)
	apiStore.ShareFirstAttempts(a.firsts)
	a.metrics.WithPool("worker", st.DB().DB)
	a.banner(auth, tmp)
	// The first of the worker and the API to stop (Ctrl-C, or the API
	// failing to listen) stops the other.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- worker.Run(ctx, c, st, a.logger, a.workerOptions(true)) }()
	go func() { errc <- a.serve(ctx, apiStore, c, auth, a.guard(true)) }()
	first := <-errc
	cancel()
	err = errors.Join(first, <-errc)
	fmt.Fprintln(a.stdout, "hookrelay stopped")
	return err
}

// startDevPostgres makes the data dir and, unless DATABASE_URL is set,
// starts the project-local PostgreSQL cluster in it; stop stops it.
func (a *app) startDevPostgres(ctx context.Context) (dataDir string, stop func(), err error) {
	if dataDir, err = filepath.Abs(a.cfg.DataDir); err != nil {
		return "", nil, err
	}
	// The data dir must be traversable: PostgreSQL runs as its own user when
	// hookrelay runs as root.
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", nil, err
	}
	if err := os.Chmod(dataDir, 0o755); err != nil {
		return "", nil, err
	}
	if a.cfg.DatabaseURL != "" {
		return dataDir, func() {}, nil
	}
	pg, err := devenv.StartPostgres(ctx, devenv.PostgresConfig{
		DataDir: filepath.Join(dataDir, "postgres"), Port: a.cfg.PostgresPort, StatementStats: true,
	}, a.logger)
	if err != nil {
		return "", nil, err
	}
	a.cfg.DatabaseURL = pg.URL
	return dataDir, func() { _ = pg.Stop() }, nil
}

// banner says where everything is, and what is left open.
func (a *app) banner(auth api.Auth, tmp *devenv.Temporal) {
	fmt.Fprintf(a.stdout, "hookrelay is running\n  API:             %[1]s://%[2]s\n  Web console:     %[1]s://%[2]s/console\n  Temporal Web UI: %[3]s\n  Temporal:        %[4]s\n  PostgreSQL:      %[5]s\n",
		a.scheme(), a.cfg.HTTPAddr, tmp.UIAddress, tmp.Address, a.cfg.DatabaseURL)
	if auth.Open {
		fmt.Fprintf(a.stdout, "  OPEN MODE: no credentials needed (loopback only, for trying hookrelay);\n"+
			"             deliveries may reach loopback. Set %s to require API keys.\n", config.EnvAdminKey)
	} else {
		fmt.Fprintln(a.stdout, "  Credentials:     required (admin key from the environment; API keys per account)")
	}
	fmt.Fprintln(a.stdout, "Press Ctrl-C to stop.")
}

// startTemporal starts the dev server on TEMPORAL_ADDRESS's port, persisting
// to a SQLite file in dataDir.
func (a *app) startTemporal(ctx context.Context, dataDir string) (*devenv.Temporal, error) {
	_, portText, err := net.SplitHostPort(a.cfg.TemporalAddress)
	if err != nil {
		return nil, fmt.Errorf("TEMPORAL_ADDRESS %q: %w", a.cfg.TemporalAddress, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("TEMPORAL_ADDRESS %q: bad port", a.cfg.TemporalAddress)
	}
	t, err := devenv.StartTemporal(ctx, devenv.TemporalConfig{
		DBFile:           filepath.Join(dataDir, "temporal.db"),
		Port:             port,
		UIPort:           a.cfg.TemporalUIPort,
		MetricsPort:      a.cfg.TemporalMetricsPort,
		Namespace:        a.cfg.TemporalNamespace,
		SearchAttributes: workflows.SearchAttributes(),
	}, a.logger)
	if err != nil {
		return nil, err
	}
	a.cfg.TemporalAddress = t.Address
	if a.cfg.TemporalUIURL == "" {
		a.cfg.TemporalUIURL = t.UIAddress // the web console links its workflows there
	}
	return t, nil
}
