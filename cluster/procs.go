package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one running process of the stack.
type Process struct {
	Name       string // its pid file's name: "history-1", "frontend", "api-2", "worker-1", …
	Pid        int
	Addr       string // where it listens (host:port, or a URL), when it does
	Membership int    // a Temporal process's membership port
}

// Processes lists the stack's running processes by name, PostgreSQL
// included.
func (c *Cluster) Processes() []Process {
	c.mu.Lock()
	var ps []Process
	for name, cmd := range c.procs {
		ps = append(ps, Process{Name: name, Pid: cmd.Process.Pid, Addr: c.listens(name), Membership: c.ports[name][1]})
	}
	c.mu.Unlock()
	if b, err := os.ReadFile(c.pidFile("postgres")); err == nil && c.PG != nil {
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		ps = append(ps, Process{Name: "postgres", Pid: pid, Addr: "127.0.0.1:" + strconv.Itoa(c.PG.Port)})
	}
	slices.SortFunc(ps, func(a, b Process) int { return compareNames(a.Name, b.Name) })
	return ps
}

// listens is where process name listens, or "".
func (c *Cluster) listens(name string) string {
	if _, ok := c.ports[name]; ok {
		return c.addr(name)
	}
	if name == "ui" {
		return c.UI
	}
	for i, api := range c.APIs {
		if name == apiName(i) {
			return api
		}
	}
	return ""
}

// compareNames orders PostgreSQL first, then Temporal's processes, the
// UI, the APIs and the workers, each kind by name.
func compareNames(a, b string) int {
	if ka, kb := kind(a), kind(b); ka != kb {
		return ka - kb
	}
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// kind is the rank of a process's kind in the banner.
func kind(name string) int {
	switch {
	case name == "postgres":
		return 0
	case name == "ui":
		return 2
	case strings.HasPrefix(name, "api-"):
		return 3
	case strings.HasPrefix(name, "worker-"):
		return 4
	}
	return 1
}

// Kill sends SIGKILL to process name ("history-1", "frontend", "api-2",
// "worker-1", …), as a crash would, and waits until it is gone. Its pid
// file goes with it.
func (c *Cluster) Kill(name string) error {
	return c.end(name, syscall.SIGKILL)
}

// StopProcess stops process name as an operator scaling down would (SIGTERM,
// SIGKILL after 15 s) and waits until it is gone.
func (c *Cluster) StopProcess(name string) error {
	return c.end(name, syscall.SIGTERM)
}

func (c *Cluster) end(name string, sig syscall.Signal) error {
	c.mu.Lock()
	cmd := c.procs[name]
	delete(c.procs, name)
	c.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("cluster: no process %q running", name)
	}
	if sig == syscall.SIGTERM {
		terminate(cmd)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	for syscall.Kill(cmd.Process.Pid, 0) == nil { // until spawn's Wait reaps it
		time.Sleep(20 * time.Millisecond)
	}
	return os.Remove(c.pidFile(name))
}

// StartProcess starts process name again (after Kill or StopProcess), with
// the ports and configuration it had, and waits until it is ready: a
// Temporal process answers its health check (a history host holds its
// shards), an API /readyz.
func (c *Cluster) StartProcess(ctx context.Context, name string) error {
	return c.startAll(ctx, name)
}

// startAll starts processes at once, then waits until each is ready.
func (c *Cluster) startAll(ctx context.Context, names ...string) error {
	exited := make([]<-chan struct{}, len(names))
	for i, name := range names {
		c.mu.Lock()
		_, running := c.procs[name]
		c.mu.Unlock()
		if running {
			return fmt.Errorf("cluster: %s is running", name)
		}
		var err error
		if exited[i], err = c.spawn(name); err != nil {
			return err
		}
	}
	for i, name := range names {
		c.mu.Lock()
		ready := c.recipes[name].ready
		c.mu.Unlock()
		if ready == nil {
			continue
		}
		if err := ready(ctx, exited[i]); err != nil {
			return fmt.Errorf("cluster: %s: %w; see %s", name, err, filepath.Join(c.cfg.Dir, name+".log"))
		}
	}
	return nil
}

// AddWorker starts one more `hookrelay worker` and returns its name.
func (c *Cluster) AddWorker(ctx context.Context) (string, error) {
	c.mu.Lock()
	c.workers++
	name := "worker-" + strconv.Itoa(c.workers)
	c.recipes[name] = c.workerRecipe()
	c.mu.Unlock()
	return name, c.StartProcess(ctx, name)
}
