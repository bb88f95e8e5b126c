// Package cluster runs hookrelay's production-shaped stack on one machine,
// without Docker: PostgreSQL; a Temporal cluster built from
// go.temporal.io/server (cluster/temporalserver) on PostgreSQL, one process
// per service (frontend, matching, two history hosts sharing the shards,
// the internal worker service); its Web UI; `hookrelay setup`; two
// `hookrelay api` and several `hookrelay worker` processes. Every process's
// pid is in Dir/pids/NAME.pid, and any of them can be killed and started
// again. `make run-cluster` runs it (cluster/runcluster); the cluster test
// drives it.
package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hookrelay/hookrelay/devenv"
)

// Config is the stack to run.
type Config struct {
	// Dir holds PostgreSQL's data, the Temporal processes' configuration,
	// the pid files (pids/) and every process's log.
	Dir string
	// Bin holds hookrelay, temporal-server, temporal-sql-tool, temporal-ui.
	Bin string
	// SchemaDir is go.temporal.io/server's schema/postgresql/v12 folder.
	SchemaDir string
	// Shards is the number of history shards (fixed once the schema exists).
	Shards int
	// APIs is how many `hookrelay api` processes run (at least one).
	APIs int
	// Workers is how many `hookrelay worker` processes run.
	Workers int
	// APIAddr is where the first `hookrelay api` listens; empty picks a
	// free port. The others always pick one.
	APIAddr string
	// Env is added to every hookrelay process's environment.
	Env []string
	// Logger reports progress.
	Logger *slog.Logger
}

// Cluster is the running stack.
type Cluster struct {
	cfg      Config
	PG       *devenv.Postgres
	Temporal string   // the frontend, host:port
	UI       string   // http://host:port
	API      string   // the first API (api-1), http://host:port
	APIs     []string // every API (api-1, api-2, …), http://host:port
	ports    map[string][2]int
	mu       sync.Mutex
	recipes  map[string]recipe
	procs    map[string]*exec.Cmd
	workers  int // the number in the last worker name given out
}

// recipe is how a process of the stack starts, and how to tell it is ready.
type recipe struct {
	args []string
	env  []string // nil: this process's environment
	// ready waits until the process is ready, or has exited (closed); nil:
	// ready once started.
	ready func(ctx context.Context, exited <-chan struct{}) error
}

// Start starts every part in order, each ready before the next, and returns
// once the APIs answer /readyz.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	c := newCluster(cfg)
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "pids"), 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(cfg.Dir, 0o755); err != nil { // PostgreSQL runs as its own user under root
		return nil, err
	}
	steps := []func(context.Context) error{c.startPostgres, c.applySchema, c.startTemporal, c.startUI,
		c.setup, c.trimVisibility, c.startAPIs, c.startWorkers}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// maxConnections is PostgreSQL's connection limit: room for every
// process's pool at once (Temporal's five processes up to 30 each, every
// hookrelay process up to 40, three workers while one is added, psql and
// the tests), which PostgreSQL's default of 100 is not.
const maxConnections = 400

// pgSettings are the cluster's PostgreSQL settings. Beside the connection
// limit: shared_buffers of 512 MB rather than 128 holds what Temporal writes
// in a benchmark's minutes, where PostgreSQL's backends otherwise evicted
// dirty pages to the kernel, which flushed them in bursts of 10-50 MB that
// every commit's sync queued behind; backend_flush_after starts the writing
// of what backends still evict every 256 kB instead
// (docs/operations.md#postgresql-settings-of-the-local-clusters). The log's
// settings are devenv's, as under `make run`.
var pgSettings = []string{"max_connections=" + strconv.Itoa(maxConnections), "shared_buffers=512MB",
	"backend_flush_after=256kB"}

func newCluster(cfg Config) *Cluster {
	return &Cluster{cfg: cfg, procs: map[string]*exec.Cmd{}, ports: map[string][2]int{}, recipes: map[string]recipe{}}
}

func (c *Cluster) startPostgres(ctx context.Context) error {
	pg, err := devenv.StartPostgres(ctx, devenv.PostgresConfig{DataDir: filepath.Join(c.cfg.Dir, "postgres"),
		StatementStats: true, Settings: pgSettings}, c.cfg.Logger)
	if err != nil {
		return err
	}
	c.PG = pg
	pidfile, err := os.ReadFile(filepath.Join(c.cfg.Dir, "postgres", "postmaster.pid"))
	if err != nil {
		return fmt.Errorf("cluster: PostgreSQL's pid: %w", err)
	}
	pid, _, _ := strings.Cut(string(pidfile), "\n")
	return os.WriteFile(c.pidFile("postgres"), []byte(pid+"\n"), 0o644)
}

// pidFile is where process name's pid is written.
func (c *Cluster) pidFile(name string) string {
	return filepath.Join(c.cfg.Dir, "pids", name+".pid")
}

// spawn starts process name from its recipe, its output appended to
// Dir/name.log and its pid written to Dir/pids/name.pid. The channel it
// returns is closed when the process exits.
func (c *Cluster) spawn(name string) (<-chan struct{}, error) {
	c.mu.Lock()
	r, ok := c.recipes[name]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("cluster: no process %q", name)
	}
	log, err := os.OpenFile(filepath.Join(c.cfg.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.args[0], r.args[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = r.env, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("cluster: start %s: %w", name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = log.Close(); close(exited) }()
	c.mu.Lock()
	c.procs[name] = cmd
	c.mu.Unlock()
	return exited, os.WriteFile(c.pidFile(name), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
}

// run runs a one-shot command to its end, its output in Dir/name.log.
func (c *Cluster) run(name string, cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(c.cfg.Dir, name+".log"), out, 0o644)
	if err != nil {
		return fmt.Errorf("cluster: %s: %w\n%s", name, err, out)
	}
	return nil
}

// Stop stops every process: hookrelay's first, then the UI and the
// frontend, the rest of Temporal, PostgreSQL last.
func (c *Cluster) Stop() {
	c.mu.Lock()
	procs := c.procs
	c.procs = map[string]*exec.Cmd{}
	c.mu.Unlock()
	for round := range 3 {
		var wg sync.WaitGroup
		for name, cmd := range procs {
			if stopRound(name) == round {
				wg.Go(func() { terminate(cmd); _ = os.Remove(c.pidFile(name)) })
			}
		}
		wg.Wait()
	}
	if c.PG != nil {
		_ = c.PG.Stop()
		_ = os.Remove(c.pidFile("postgres"))
	}
}

// stopRound is when Stop stops process name: hookrelay's processes (0),
// the UI and the frontend (1), then the rest of Temporal (2).
func stopRound(name string) int {
	switch {
	case name == "ui" || name == "frontend":
		return 1
	case strings.HasPrefix(name, "api-") || strings.HasPrefix(name, "worker-"):
		return 0
	}
	return 2
}

// terminate sends SIGTERM to a process group, and SIGKILL after 15 s.
func terminate(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	for deadline := time.Now().Add(15 * time.Second); syscall.Kill(cmd.Process.Pid, 0) == nil && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
