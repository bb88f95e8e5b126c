package devenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// pgUser is the superuser initdb creates; it is also the URL's user.
const pgUser = "hookrelay"

// pgDatabase is the database StartPostgres makes sure exists.
const pgDatabase = "hookrelay"

// pgStartTimeout bounds how long StartPostgres waits for the server.
const pgStartTimeout = 60 * time.Second

// maxSocketPath is the longest unix socket path Linux accepts (sun_path - 1).
const maxSocketPath = 107

// PostgresConfig says where the cluster lives.
type PostgresConfig struct {
	// DataDir holds the cluster, its unix socket and its log (postgres.log).
	// Required; created if missing.
	DataDir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one. A server already
	// running on DataDir keeps the port it has.
	Port int
	// BinDir holds initdb, pg_ctl and postgres. "" finds them via
	// pg_config --bindir, then /usr/lib/postgresql/*/bin, then the PATH.
	BinDir string
	// Settings are server settings ("name=value", passed as -c), for
	// example the throwaway test clusters' fsync=off.
	Settings []string
	// StatementStats loads pg_stat_statements (when the server has it), so
	// that an operator, or the benchmark, can count what each statement
	// costs: `CREATE EXTENSION pg_stat_statements` then reads it.
	StatementStats bool
}

// Postgres is a running cluster.
type Postgres struct {
	// URL connects to database "hookrelay" as superuser "hookrelay", e.g.
	// postgres://hookrelay@127.0.0.1:PORT/hookrelay?sslmode=disable.
	URL string
	// Port is the TCP port the server listens on, on 127.0.0.1.
	Port int
	// LogPath is the server's log file.
	LogPath string

	runner   *pgRunner
	dataDir  string
	settings []string
	logStart int64 // size of the log before this start, for error messages
	started  bool  // false when an already running server was reused
}

// StartPostgres initialises DataDir if it holds no cluster (initdb with trust
// auth and superuser "hookrelay"), starts the server on 127.0.0.1:Port with
// its unix socket in DataDir, waits until it accepts connections and creates
// database "hookrelay" if missing. A server already running on DataDir is
// reused. When uid is 0 the server runs as the postgres user, which then owns
// DataDir and must be able to traverse its parents.
func StartPostgres(ctx context.Context, cfg PostgresConfig, logger *slog.Logger) (*Postgres, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("start postgres: PostgresConfig.DataDir is required")
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	r, err := newPGRunner(cfg.BinDir)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if err := r.prepareDir(dataDir); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	settings := append(walSettings(), cfg.Settings...)
	if cfg.StatementStats && r.hasLibrary("pg_stat_statements") {
		settings = append(settings, "shared_preload_libraries=pg_stat_statements")
	}
	p := &Postgres{runner: r, dataDir: dataDir, settings: settings, LogPath: filepath.Join(dataDir, "postgres.log")}
	if err := p.startOrReuse(ctx, cfg.Port, logger); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	p.URL = p.DatabaseURL(pgDatabase)
	if err := p.ready(ctx); err != nil {
		return nil, p.abort(fmt.Errorf("start postgres: %w%s", err, p.logHint()))
	}
	if err := p.ensureDatabase(ctx, pgDatabase); err != nil {
		return nil, p.abort(fmt.Errorf("start postgres: %w", err))
	}
	return p, nil
}

// startOrReuse sets p.Port, starting a server unless one runs on the data dir.
func (p *Postgres) startOrReuse(ctx context.Context, port int, logger *slog.Logger) error {
	running, ok, err := postmasterPort(p.dataDir)
	if err != nil {
		return err
	}
	if ok {
		p.Port = running
		logger.Info("postgres_reused", "data_dir", p.dataDir, "port", running, "requested_port", port)
		return nil
	}
	if err := p.initdb(ctx, logger); err != nil {
		return err
	}
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return err
		}
	}
	p.Port = port
	begin := time.Now()
	if err := p.pgctlStart(ctx); err != nil {
		return err
	}
	p.started = true
	logger.Info("postgres_started", "data_dir", p.dataDir, "port", port, "took", time.Since(begin))
	return nil
}

// walSegmentMB is the size, in MB, of the write-ahead log's segment files in
// a cluster initdb creates: 1 rather than PostgreSQL's 16. PostgreSQL fills
// each new segment with zeros and syncs it while it holds the lock every
// commit waits for, and a cluster has no used segments to recycle until its
// first checkpoint (five minutes after it starts). On the production-shaped
// cluster at 50 deliveries a second a new 16 MB segment came every five
// seconds and stopped every commit for 60-170 ms; a 1 MB one takes a few
// (docs/operations.md#postgresql-settings-of-the-local-clusters).
const walSegmentMB = "1"

// walSettings are PostgreSQL's own defaults for how much log to keep, which
// initdb scales down with the segment size (max_wal_size 64 MB for 1 MB
// segments): left so, a busy cluster checkpointed every few seconds and
// wrote every page it touched again whole into the log after each one. The
// whole pages a checkpoint still causes (the first change to each page after
// it) are compressed with lz4: behind a saturated phase they were up to 22 MB
// of log a second, which every commit's sync waited behind
// (docs/operations.md#postgresql-settings-of-the-local-clusters). Settings
// given later win.
func walSettings() []string {
	return []string{"max_wal_size=1GB", "min_wal_size=80MB", "wal_compression=lz4"}
}

// initdb creates the cluster unless DataDir already holds one.
func (p *Postgres) initdb(ctx context.Context, logger *slog.Logger) error {
	if _, err := os.Stat(filepath.Join(p.dataDir, "PG_VERSION")); err == nil {
		return nil
	}
	begin := time.Now()
	err := p.runner.run(ctx, p.dataDir, "initdb", "-D", p.dataDir, "-U", pgUser,
		"--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync", "--wal-segsize="+walSegmentMB)
	if err != nil {
		return err
	}
	logger.Info("postgres_initialised", "data_dir", p.dataDir, "took", time.Since(begin))
	return nil
}

// pgctlStart starts the server in the background and waits for it.
func (p *Postgres) pgctlStart(ctx context.Context) error {
	if n := len(p.dataDir) + len("/.s.PGSQL.") + 5; n > maxSocketPath {
		return fmt.Errorf("data dir path %s is too long for a unix socket inside it (%d > %d bytes)", p.dataDir, n, maxSocketPath)
	}
	p.logStart = logSize(p.LogPath)
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s", p.Port, shellQuote(p.dataDir))
	for _, s := range p.settings {
		opts += " -c " + shellQuote(s)
	}
	timeout := strconv.Itoa(int(pgStartTimeout.Seconds()))
	err := p.runner.run(ctx, p.dataDir, "pg_ctl", "start", "-w", "-t", timeout,
		"-D", p.dataDir, "-l", p.LogPath, "-o", opts)
	if err != nil {
		return fmt.Errorf("%w%s", err, p.logHint())
	}
	return nil
}

// logHint points at the server's log of this start, for error messages.
func (p *Postgres) logHint() string {
	return fmt.Sprintf(" (log: %s)\n%s", p.LogPath, logTail(p.LogPath, p.logStart, 10))
}

// shellQuote quotes s for /bin/sh, which pg_ctl runs postgres through.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ready waits until the server accepts connections.
func (p *Postgres) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pgStartTimeout)
	defer cancel()
	db, err := sql.Open("postgres", p.DatabaseURL("postgres"))
	if err != nil {
		return fmt.Errorf("open admin connection: %w", err)
	}
	defer db.Close()
	for {
		err := db.PingContext(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for connections: %w (last error: %w)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ensureDatabase creates database name unless it exists.
func (p *Postgres) ensureDatabase(ctx context.Context, name string) error {
	err := p.createDatabase(ctx, name, "")
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "42P04" { // duplicate_database
		return nil
	}
	return err
}

// createDatabase runs CREATE DATABASE over an admin connection.
func (p *Postgres) createDatabase(ctx context.Context, name, template string) error {
	db, err := sql.Open("postgres", p.DatabaseURL("postgres"))
	if err != nil {
		return fmt.Errorf("open admin connection: %w", err)
	}
	defer db.Close()
	q := "CREATE DATABASE " + pq.QuoteIdentifier(name)
	if template != "" {
		q += " TEMPLATE " + pq.QuoteIdentifier(template)
	}
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

// CreateDatabase creates a fresh, empty database with this name (for
// isolated tests) and returns its URL. It fails if the database exists.
func (p *Postgres) CreateDatabase(ctx context.Context, name string) (string, error) {
	return p.CreateDatabaseFrom(ctx, name, "")
}

// CreateDatabaseFrom creates a database with this name as a copy of
// template ("" for an empty one) and returns its URL. Nothing may be
// connected to template meanwhile.
func (p *Postgres) CreateDatabaseFrom(ctx context.Context, name, template string) (string, error) {
	if name == "" || len(name) > 63 {
		return "", fmt.Errorf("create database: name %q must be 1 to 63 bytes", name)
	}
	if err := p.createDatabase(ctx, name, template); err != nil {
		return "", err
	}
	return p.DatabaseURL(name), nil
}

// DatabaseURL is the URL of database name on this server.
func (p *Postgres) DatabaseURL(name string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(pgUser),
		Host:     "127.0.0.1:" + strconv.Itoa(p.Port),
		Path:     "/" + name,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// abort stops a server StartPostgres started before failing, and returns err.
func (p *Postgres) abort(err error) error {
	if stopErr := p.Stop(); stopErr != nil {
		return errors.Join(err, stopErr)
	}
	return err
}

// Stop stops the server if StartPostgres started it (pg_ctl stop -m fast);
// a reused server keeps running. Stopping twice is a no-op.
func (p *Postgres) Stop() error {
	if !p.started {
		return nil
	}
	err := p.runner.run(context.Background(), p.dataDir, "pg_ctl", "stop", "-w", "-m", "fast", "-D", p.dataDir)
	if err != nil {
		return fmt.Errorf("stop postgres: %w", err)
	}
	p.started = false
	return nil
}

// StopImmediate stops the server in immediate mode: no checkpoint, every
// connection cut, recovery at the next start, as after a crash (the chaos
// suite). StartPostgres on the same DataDir starts it again.
func (p *Postgres) StopImmediate() error {
	err := p.runner.run(context.Background(), p.dataDir, "pg_ctl", "stop", "-w", "-m", "immediate", "-D", p.dataDir)
	if err != nil {
		return fmt.Errorf("stop postgres: %w", err)
	}
	p.started = false
	return nil
}
