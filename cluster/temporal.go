package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/devenv"
)

// Temporal's two databases and the schema folder of each.
var schemas = map[string]string{"temporal": "temporal", "temporal_visibility": "visibility"}

// applySchema creates Temporal's databases and brings their schema up to
// date with Temporal's own SQL tool; it can run again on a stack that has
// them.
func (c *Cluster) applySchema(ctx context.Context) error {
	tool := filepath.Join(c.cfg.Bin, "temporal-sql-tool")
	for db, dir := range schemas {
		base := []string{"--plugin", "postgres12", "--ep", "127.0.0.1", "-p", strconv.Itoa(c.PG.Port),
			"-u", "hookrelay", "--db", db}
		if !c.databaseExists(ctx, db) {
			steps := [][]string{{"create-database"}, {"setup-schema", "-v", "0.0"}}
			for _, s := range steps {
				if err := c.run(ctx, "schema-"+db, exec.CommandContext(ctx, tool, append(base, s...)...)); err != nil {
					return err
				}
			}
		}
		update := append(base, "update-schema", "-d", filepath.Join(c.cfg.SchemaDir, dir, "versioned"))
		if err := c.run(ctx, "schema-"+db, exec.CommandContext(ctx, tool, update...)); err != nil {
			return err
		}
	}
	return nil
}

// databaseExists tells whether the cluster has database db with Temporal's
// schema version table in it.
func (c *Cluster) databaseExists(ctx context.Context, db string) bool {
	u := strings.Replace(c.PG.URL, "/hookrelay?", "/"+db+"?", 1)
	cmd := exec.CommandContext(ctx, "psql", u, "-tAc", "SELECT 1 FROM schema_version LIMIT 1")
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == "1"
}

// serverConfig is the Temporal server's configuration: every service in one
// process on loopback, PostgreSQL persistence, Shards history shards.
var serverConfig = template.Must(template.New("temporal.yaml").Parse(`log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: {{.Shards}}
  datastores:
{{- range $name, $db := .Stores}}
    {{$name}}:
      sql:
        pluginName: postgres12
        databaseName: {{$db}}
        connectAddr: "127.0.0.1:{{$.PGPort}}"
        connectProtocol: tcp
        user: hookrelay
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
{{- end}}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
{{- range $svc, $p := .Ports}}
  {{$svc}}:
    rpc:
      grpcPort: {{index $p 0}}
      membershipPort: {{index $p 1}}
      bindOnLocalHost: true
{{- end}}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:{{index (index .Ports "frontend") 0}}"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "{{.DynamicConfig}}"
  pollInterval: 10s
`))

// dynamicConfig keeps one partition per task queue, as `make run` does.
const dynamicConfig = `matching.numTaskqueueReadPartitions:
  - value: 1
matching.numTaskqueueWritePartitions:
  - value: 1
`

// startTemporal writes the server's configuration (with free ports) and
// starts it, waiting until its frontend answers.
func (c *Cluster) startTemporal(ctx context.Context) error {
	ports := map[string][2]int{}
	for _, svc := range []string{"frontend", "history", "matching", "worker"} {
		ports[svc] = [2]int{lowPort(), lowPort()}
	}
	dyn := filepath.Join(c.cfg.Dir, "dynamicconfig.yaml")
	if err := os.WriteFile(dyn, []byte(dynamicConfig), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(c.cfg.Dir, "temporal.yaml"))
	if err != nil {
		return err
	}
	err = serverConfig.Execute(f, map[string]any{"Shards": c.cfg.Shards, "PGPort": c.PG.Port, "Ports": ports,
		"Stores": map[string]string{"default": "temporal", "visibility": "temporal_visibility"}, "DynamicConfig": dyn})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	c.Temporal = "127.0.0.1:" + strconv.Itoa(ports["frontend"][0])
	cmd := exec.Command(filepath.Join(c.cfg.Bin, "temporal-server"), "-config-file", f.Name())
	if err := c.spawn("temporal-server", cmd); err != nil {
		return err
	}
	return c.waitTemporal(ctx, 2*time.Minute)
}

// waitTemporal waits until the frontend answers a health check.
func (c *Cluster) waitTemporal(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		cl, err := client.DialContext(ctx, client.Options{HostPort: c.Temporal})
		if err == nil {
			_, err = cl.CheckHealth(ctx, &client.CheckHealthRequest{})
			cl.Close()
			if err == nil {
				return nil
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("cluster: the Temporal server did not answer within %v; see %s", limit,
		filepath.Join(c.cfg.Dir, "temporal-server.log"))
}

func (c *Cluster) startUI(context.Context) error {
	addr := "127.0.0.1:" + strconv.Itoa(freePort())
	c.UI = "http://" + addr
	return c.spawn("temporal-ui", exec.Command(filepath.Join(c.cfg.Bin, "temporal-ui"), "-addr", addr, "-temporal", c.Temporal))
}

// setup runs `hookrelay setup --create-namespace`.
func (c *Cluster) setup(ctx context.Context) error {
	if c.API == "" {
		addr := c.cfg.APIAddr
		if addr == "" {
			addr = "127.0.0.1:" + strconv.Itoa(freePort())
		}
		c.API = "http://" + addr
	}
	cmd := exec.CommandContext(ctx, filepath.Join(c.cfg.Bin, "hookrelay"), "setup", "--create-namespace")
	cmd.Env = c.hookrelayEnv()
	return c.run(ctx, "setup", cmd)
}

// startAPI starts `hookrelay api` and waits until /readyz answers 200.
func (c *Cluster) startAPI(context.Context) error {
	cmd := exec.Command(filepath.Join(c.cfg.Bin, "hookrelay"), "api")
	cmd.Env = c.hookrelayEnv()
	if err := c.spawn("api", cmd); err != nil {
		return err
	}
	if err := devenv.WaitReady(c.API+"/readyz", time.Minute, nil); err != nil {
		return fmt.Errorf("cluster: hookrelay api: %w; see %s", err, filepath.Join(c.cfg.Dir, "api.log"))
	}
	return nil
}

// lowPort is a free port below 32768: the server stores its membership port
// in a smallint, and the kernel's free ports are above that.
func lowPort() int {
	for {
		p := 20000 + rand.IntN(12000)
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			_ = ln.Close()
			return p
		}
	}
}

func freePort() int {
	p, err := devenv.FreePort()
	if err != nil {
		panic(err) // no free port on loopback: nothing can run
	}
	return p
}
