package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hookrelay/hookrelay/devenv"
)

// startUI starts the Temporal Web UI on the frontend.
func (c *Cluster) startUI(context.Context) error {
	addr := "127.0.0.1:" + strconv.Itoa(freePort())
	c.UI = "http://" + addr
	c.recipes["ui"] = recipe{args: []string{filepath.Join(c.cfg.Bin, "temporal-ui"), "-addr", addr, "-temporal", c.Temporal}}
	_, err := c.spawn("ui")
	return err
}

// hookrelayEnv is the environment of hookrelay's processes, listening (an
// API) on addr.
func (c *Cluster) hookrelayEnv(addr string) []string {
	env := append(os.Environ(), "DATABASE_URL="+c.PG.URL, "TEMPORAL_ADDRESS="+c.Temporal,
		"TEMPORAL_NAMESPACE=default", "HOOKRELAY_HTTP_ADDR="+addr)
	return append(env, c.cfg.Env...)
}

// setup picks the APIs' addresses and runs `hookrelay setup
// --create-namespace`.
func (c *Cluster) setup(ctx context.Context) error {
	for i := range max(c.cfg.APIs, 1) {
		addr := c.cfg.APIAddr
		if i > 0 || addr == "" {
			addr = "127.0.0.1:" + strconv.Itoa(freePort())
		}
		c.APIs = append(c.APIs, "http://"+addr)
	}
	c.API = c.APIs[0]
	cmd := exec.CommandContext(ctx, filepath.Join(c.cfg.Bin, "hookrelay"), "setup", "--create-namespace")
	cmd.Env = c.hookrelayEnv(c.API[len("http://"):])
	return c.run("setup", cmd) // which returns once the namespace accepts the search attributes
}

// apiName is the name of the i-th API process (from 0).
func apiName(i int) string { return "api-" + strconv.Itoa(i+1) }

// startAPIs starts every `hookrelay api` and waits until each answers
// /readyz with 200.
func (c *Cluster) startAPIs(ctx context.Context) error {
	var names []string
	for i, api := range c.APIs {
		name := apiName(i)
		c.recipes[name] = recipe{args: []string{filepath.Join(c.cfg.Bin, "hookrelay"), "api"},
			env: c.hookrelayEnv(api[len("http://"):]), ready: apiReady(api)}
		names = append(names, name)
	}
	return c.startAll(ctx, names...)
}

// apiReady waits until the API at url answers /readyz with 200.
func apiReady(url string) func(context.Context, <-chan struct{}) error {
	return func(_ context.Context, exited <-chan struct{}) error {
		return devenv.WaitReady(url+"/readyz", time.Minute, exited)
	}
}

// startWorkers starts Config.Workers `hookrelay worker` processes.
func (c *Cluster) startWorkers(ctx context.Context) error {
	for range c.cfg.Workers {
		if _, err := c.AddWorker(ctx); err != nil {
			return err
		}
	}
	return nil
}

// workerRecipe starts `hookrelay worker`.
func (c *Cluster) workerRecipe() recipe {
	return recipe{args: []string{filepath.Join(c.cfg.Bin, "hookrelay"), "worker"}, env: c.hookrelayEnv(c.API[len("http://"):])}
}

func freePort() int {
	p, err := devenv.FreePort()
	if err != nil {
		panic(err) // no free port on loopback: nothing can run
	}
	return p
}
