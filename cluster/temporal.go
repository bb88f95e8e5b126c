package cluster

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/hookrelay/hookrelay/devenv"
)

// temporalProcs are the Temporal server's processes, each one service of the
// same binary: two history hosts sharing the shards, matching, the
// frontend every client dials, and the internal worker service (Temporal's
// system workflows). Their order is the order they start in.
var temporalProcs = []struct{ name, service, health string }{
	{"history-1", "history", "temporal.api.workflowservice.v1.HistoryService"},
	{"history-2", "history", "temporal.api.workflowservice.v1.HistoryService"},
	{"matching", "matching", "temporal.api.workflowservice.v1.MatchingService"},
	{"frontend", "frontend", "temporal.api.workflowservice.v1.WorkflowService"},
	{"internal-worker", "worker", "temporal.api.workflowservice.v1.WorkerService"},
}

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
				if err := c.run("schema-"+db, exec.CommandContext(ctx, tool, append(base, s...)...)); err != nil {
					return err
				}
			}
		}
		update := append(base, "update-schema", "-d", filepath.Join(c.cfg.SchemaDir, dir, "versioned"))
		if err := c.run("schema-"+db, exec.CommandContext(ctx, tool, update...)); err != nil {
			return err
		}
	}
	return nil
}

// databaseExists tells whether the cluster has database db with Temporal's
// schema version table in it.
func (c *Cluster) databaseExists(ctx context.Context, db string) bool {
	cmd := exec.CommandContext(ctx, "psql", c.PG.DatabaseURL(db), "-tAc", "SELECT 1 FROM schema_version LIMIT 1")
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == "1"
}

// serverConfig is one Temporal process's configuration: PostgreSQL
// persistence through the postgres12_pgx plugin, which prepares each
// statement once per connection (one round trip per statement, none parsed
// again; lib/pq's postgres12 makes two and parses every time), with each
// process's pools up to 20 connections to the main store and 10 to
// visibility; Shards history shards; every service's ports on loopback (the
// process runs one of them; the others find it, and it finds them, through
// the membership table in PostgreSQL, each by its gRPC and membership port).
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
        pluginName: postgres12_pgx
        databaseName: {{index $db 0}}
        connectAddr: "127.0.0.1:{{$.PGPort}}"
        connectProtocol: tcp
        user: hookrelay
        maxConns: {{index $db 1}}
        maxIdleConns: {{index $db 1}}
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

// dynamicConfig keeps one partition per task queue, as `make run` does,
// and caps each history host's cache of workflows at 1,024 (Temporal's
// default is 128,000, each kept up to an hour). Nearly every delivery's
// workflow closes in its first task, so the cache filled with closed ones,
// about 17 kB each, and every garbage collection of a history host had to
// walk them all (docs/operations.md#temporals-history-hosts-and-their-garbage-collector).
// Matching serves each task queue's tasks by fairness key in turn
// (docs/endpoints.md#isolation), as the dev server does.
const dynamicConfig = `matching.numTaskqueueReadPartitions:
  - value: 1
matching.numTaskqueueWritePartitions:
  - value: 1
history.hostLevelCacheMaxSize:
  - value: 1024
matching.enableFairness:
  - value: true
`

// temporalGOGC is the garbage collector's target for the Temporal processes
// unless GOGC is set: a collection when the heap has grown by four times
// what was live after the last one, rather than by as much again (Go's
// default, 100). Each collection of a history host took the machine's spare
// core for 0.2-0.5 s, and the deliveries in flight waited behind it; at 400
// they come a quarter as often
// (docs/operations.md#temporals-history-hosts-and-their-garbage-collector).
const temporalGOGC = "400"

// temporalEnv is the Temporal processes' environment: this process's, with
// GOGC set to temporalGOGC unless it is set already.
func temporalEnv() []string {
	env := os.Environ()
	if _, set := os.LookupEnv("GOGC"); !set {
		env = append(env, "GOGC="+temporalGOGC)
	}
	return env
}

// startTemporal configures the Temporal processes and starts them:
// history-1 first, which initialises the cluster's metadata on a new
// database and seeds the membership ring (processes starting together on an
// empty one would race for both), then the others at once; each is waited
// for until it answers its health check.
func (c *Cluster) startTemporal(ctx context.Context) error {
	if err := c.configureTemporal(); err != nil {
		return err
	}
	if err := c.startAll(ctx, temporalProcs[0].name); err != nil {
		return err
	}
	var rest []string
	for _, p := range temporalProcs[1:] {
		rest = append(rest, p.name)
	}
	return c.startAll(ctx, rest...)
}

// configureTemporal picks every Temporal process's ports and writes its
// configuration (Dir/temporal/NAME.yaml) and its recipe.
func (c *Cluster) configureTemporal() error {
	dir := filepath.Join(c.cfg.Dir, "temporal")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dyn := filepath.Join(dir, "dynamicconfig.yaml")
	if err := os.WriteFile(dyn, []byte(dynamicConfig), 0o644); err != nil {
		return err
	}
	taken := map[int]bool{}
	for _, p := range temporalProcs {
		c.ports[p.name] = [2]int{lowPort(taken), lowPort(taken)}
	}
	c.Temporal = c.addr("frontend")
	env := temporalEnv()
	for _, p := range temporalProcs {
		if err := c.writeServerConfig(p.name, p.service, dyn); err != nil {
			return err
		}
		file := filepath.Join(dir, p.name+".yaml")
		cmd := []string{filepath.Join(c.cfg.Bin, "temporal-server"), "-config-file", file, "-service", p.service}
		c.recipes[p.name] = recipe{args: cmd, env: env, ready: c.grpcReady(p.name, p.health)}
	}
	return nil
}

// writeServerConfig writes process name's configuration: its own ports for
// its service, and the other processes' ports for theirs (a history host
// sees history-1's).
func (c *Cluster) writeServerConfig(name, service, dyn string) error {
	ports := map[string][2]int{"history": c.ports["history-1"], "matching": c.ports["matching"],
		"frontend": c.ports["frontend"], "worker": c.ports["internal-worker"]}
	ports[service] = c.ports[name]
	f, err := os.Create(filepath.Join(c.cfg.Dir, "temporal", name+".yaml"))
	if err != nil {
		return err
	}
	err = serverConfig.Execute(f, map[string]any{"Shards": c.cfg.Shards, "PGPort": c.PG.Port, "Ports": ports,
		"Stores": map[string][2]any{"default": {"temporal", 20}, "visibility": {"temporal_visibility", 10}}, "DynamicConfig": dyn})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// addr is a Temporal process's gRPC address.
func (c *Cluster) addr(name string) string {
	return "127.0.0.1:" + strconv.Itoa(c.ports[name][0])
}

// grpcReady waits until process name answers SERVING to a gRPC health
// check of its service (a history host does once it holds its shards).
func (c *Cluster) grpcReady(name, service string) func(context.Context, <-chan struct{}) error {
	return func(ctx context.Context, exited <-chan struct{}) error {
		conn, err := grpc.NewClient(c.addr(name), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		health := healthpb.NewHealthClient(conn)
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			res, err := health.Check(cctx, &healthpb.HealthCheckRequest{Service: service})
			cancel()
			if err == nil && res.Status == healthpb.HealthCheckResponse_SERVING {
				return nil
			}
			select {
			case <-exited:
				return devenv.ErrExited
			case <-ctx.Done():
				return ctx.Err()
			default:
			}
		}
		return errors.New("no SERVING answer to its health check within 2 minutes")
	}
}

// lowPort is a free port below 32768 and not in taken (which it joins): the
// server stores its membership port in a smallint, and the kernel's free
// ports are above that.
func lowPort(taken map[int]bool) int {
	for {
		p := 20000 + rand.IntN(12000)
		if taken[p] {
			continue
		}
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			_ = ln.Close()
			taken[p] = true
			return p
		}
	}
}
