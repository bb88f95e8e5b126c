// Package cluster runs hookrelay's production-shaped stack on one machine,
// without Docker: PostgreSQL, a Temporal server built from
// go.temporal.io/server (cluster/temporalserver) on PostgreSQL with several
// history shards, its Web UI, `hookrelay setup`, one `hookrelay api` and
// several `hookrelay worker` processes. `make run-cluster` runs it
// (cluster/runcluster); the cluster test drives it.
package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hookrelay/hookrelay/devenv"
)

// Config is the stack to run.
type Config struct {
	// Dir holds PostgreSQL's data, the Temporal server's configuration and
	// every process's log.
	Dir string
	// Bin holds hookrelay, temporal-server, temporal-sql-tool, temporal-ui.
	Bin string
	// SchemaDir is go.temporal.io/server's schema/postgresql/v12 folder.
	SchemaDir string
	// Shards is the number of history shards (fixed once the schema exists).
	Shards int
	// Workers is how many `hookrelay worker` processes run.
	Workers int
	// APIAddr is where `hookrelay api` listens; empty picks a free port.
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
	Temporal string // the frontend, host:port
	UI       string // http://host:port
	API      string // http://host:port
	ports    map[string]int
	mu       sync.Mutex
	procs    map[string]*exec.Cmd
}

// Start starts every part in order, each ready before the next, and returns
// once the API answers /readyz.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	c := &Cluster{cfg: cfg, procs: map[string]*exec.Cmd{}, ports: map[string]int{}}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(cfg.Dir, 0o755); err != nil { // PostgreSQL runs as its own user under root
		return nil, err
	}
	steps := []func(context.Context) error{c.startPostgres, c.applySchema, c.startTemporal, c.startUI, c.setup, c.startAPI}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			c.Stop()
			return nil, err
		}
	}
	for i := range cfg.Workers {
		if err := c.StartWorker(i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) startPostgres(ctx context.Context) error {
	pg, err := devenv.StartPostgres(ctx, devenv.PostgresConfig{
		DataDir: filepath.Join(c.cfg.Dir, "postgres"), StatementStats: true}, c.cfg.Logger)
	if err != nil {
		return err
	}
	c.PG = pg
	return nil
}

// hookrelayEnv is the environment of hookrelay's processes.
func (c *Cluster) hookrelayEnv() []string {
	env := append(os.Environ(), "DATABASE_URL="+c.PG.URL, "TEMPORAL_ADDRESS="+c.Temporal,
		"TEMPORAL_NAMESPACE=default", "HOOKRELAY_HTTP_ADDR="+c.API[len("http://"):])
	return append(env, c.cfg.Env...)
}

// spawn starts a process of the stack, its output in Dir/name.log.
func (c *Cluster) spawn(name string, cmd *exec.Cmd) error {
	log, err := os.OpenFile(filepath.Join(c.cfg.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("cluster: start %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); _ = log.Close() }()
	c.mu.Lock()
	c.procs[name] = cmd
	c.mu.Unlock()
	return nil
}

// run runs a one-shot command to its end, its output in Dir/name.log.
func (c *Cluster) run(ctx context.Context, name string, cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(c.cfg.Dir, name+".log"), out, 0o644)
	if err != nil {
		return fmt.Errorf("cluster: %s: %w\n%s", name, err, out)
	}
	return nil
}

// StartWorker starts `hookrelay worker` number i (again, after Kill).
func (c *Cluster) StartWorker(i int) error {
	name := "worker-" + strconv.Itoa(i)
	cmd := exec.Command(filepath.Join(c.cfg.Bin, "hookrelay"), "worker")
	cmd.Env = c.hookrelayEnv()
	return c.spawn(name, cmd)
}

// Kill sends SIGKILL to a process of the stack ("worker-0", "api", …), as
// a crash would, and waits until it is gone.
func (c *Cluster) Kill(name string) error {
	c.mu.Lock()
	cmd := c.procs[name]
	delete(c.procs, name)
	c.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("cluster: no process %q", name)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	for syscall.Kill(cmd.Process.Pid, 0) == nil {
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Stop stops every process: hookrelay's first, then the UI and the Temporal
// server, PostgreSQL last.
func (c *Cluster) Stop() {
	c.mu.Lock()
	procs := c.procs
	c.procs = map[string]*exec.Cmd{}
	c.mu.Unlock()
	last := map[string]int{"temporal-ui": 1, "temporal-server": 2}
	for round := 0; round <= 2; round++ {
		for name, cmd := range procs {
			if last[name] == round {
				terminate(cmd)
			}
		}
	}
	if c.PG != nil {
		_ = c.PG.Stop()
	}
}

// terminate sends SIGTERM to a process group, and SIGKILL after 15 s.
func terminate(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	for deadline := time.Now().Add(15 * time.Second); syscall.Kill(cmd.Process.Pid, 0) == nil && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
