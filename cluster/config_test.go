package cluster

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hookrelay/hookrelay/devenv"
)

// serverFile is the part of a Temporal process's configuration the checks
// read.
type serverFile struct {
	Persistence struct {
		NumHistoryShards int `yaml:"numHistoryShards"`
		Datastores       map[string]struct {
			SQL struct {
				ConnectAddr string `yaml:"connectAddr"`
				MaxConns    int    `yaml:"maxConns"`
			} `yaml:"sql"`
		} `yaml:"datastores"`
	} `yaml:"persistence"`
	Services map[string]struct {
		RPC struct {
			GRPCPort       int `yaml:"grpcPort"`
			MembershipPort int `yaml:"membershipPort"`
		} `yaml:"rpc"`
	} `yaml:"services"`
	ClusterMetadata struct {
		ClusterInformation map[string]struct {
			RPCAddress string `yaml:"rpcAddress"`
		} `yaml:"clusterInformation"`
	} `yaml:"clusterMetadata"`
}

// TestTemporalProcesses (in `make test`; the cluster itself runs under `make
// test-cluster`): every Temporal process gets its own configuration in
// which its service has its own gRPC and membership ports, no two processes
// share a port (the two history hosts included), every one reaches the
// same PostgreSQL and names the same frontend, and it is started as that
// one service.
func TestTemporalProcesses(t *testing.T) {
	c := newCluster(Config{Dir: t.TempDir(), Bin: "/bin", Shards: 16})
	c.PG = &devenv.Postgres{Port: 5432}
	if err := c.configureTemporal(); err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for _, p := range temporalProcs {
		f := readServerFile(t, filepath.Join(c.cfg.Dir, "temporal", p.name+".yaml"))
		own := f.Services[p.service].RPC
		if own.GRPCPort != c.ports[p.name][0] || own.MembershipPort != c.ports[p.name][1] {
			t.Errorf("%s: %s listens on %d/%d, want its own ports %v", p.name, p.service, own.GRPCPort, own.MembershipPort, c.ports[p.name])
		}
		for _, port := range []int{own.GRPCPort, own.MembershipPort} {
			if other, dup := seen[port]; dup {
				t.Errorf("%s and %s share port %d", p.name, other, port)
			}
			seen[port] = p.name
		}
		if got := f.ClusterMetadata.ClusterInformation["active"].RPCAddress; got != c.Temporal {
			t.Errorf("%s: the frontend is %q, want %q", p.name, got, c.Temporal)
		}
		if f.Persistence.NumHistoryShards != 16 || f.Persistence.Datastores["default"].SQL.ConnectAddr != "127.0.0.1:5432" {
			t.Errorf("%s: %+v", p.name, f.Persistence)
		}
		args := c.recipes[p.name].args
		if !slices.Equal(args[len(args)-2:], []string{"-service", p.service}) {
			t.Errorf("%s starts as %v", p.name, args)
		}
	}
	if len(seen) != 2*len(temporalProcs) {
		t.Errorf("%d distinct ports for %d processes", len(seen), len(temporalProcs))
	}
}

func readServerFile(t *testing.T, path string) serverFile {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f serverFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// TestProcessLifecycle: the pid files and Processes follow a process of the
// stack (a real one, sleep) through Kill, StartProcess and StopProcess.
func TestProcessLifecycle(t *testing.T) {
	c := newCluster(Config{Dir: t.TempDir()})
	if err := os.MkdirAll(filepath.Join(c.cfg.Dir, "pids"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	c.recipes["worker-1"] = recipe{args: []string{"sleep", "600"}}
	first := started(t, c, "worker-1")
	if err := c.Kill("worker-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.pidFile("worker-1")); !os.IsNotExist(err) {
		t.Errorf("the pid file outlived kill -9: %v", err)
	}
	if len(c.Processes()) != 0 {
		t.Errorf("after Kill: %+v", c.Processes())
	}
	if second := started(t, c, "worker-1"); second == first {
		t.Errorf("started again with the same pid %d", first)
	}
	if err := c.StopProcess("worker-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill("worker-1"); err == nil {
		t.Error("Kill of a stopped process: no error")
	}
}

// started starts process name and checks its pid file and Processes agree
// on its pid, which is alive; it returns the pid.
func started(t *testing.T, c *Cluster, name string) int {
	t.Helper()
	if err := c.StartProcess(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(c.pidFile(name))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	ps := c.Processes()
	if len(ps) != 1 || ps[0].Name != name || ps[0].Pid != pid {
		t.Fatalf("pid file %d, Processes %+v", pid, ps)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		t.Fatalf("pid %d is not running: %v", pid, err)
	}
	return pid
}

// TestTemporalMemory: the history hosts' workflow cache is capped well below
// Temporal's default of 128,000 entries, and every Temporal process gets
// GOGC=400 unless GOGC is set, in which case it keeps that
// (docs/operations.md#temporals-history-hosts-and-their-garbage-collector).
func TestTemporalMemory(t *testing.T) {
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	c := newCluster(Config{Dir: t.TempDir(), Bin: "/bin", Shards: 16})
	c.PG = &devenv.Postgres{Port: 5432}
	if err := c.configureTemporal(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(c.cfg.Dir, "temporal", "dynamicconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var dyn map[string][]struct{ Value any }
	if err := yaml.Unmarshal(b, &dyn); err != nil {
		t.Fatal(err)
	}
	if v := dyn["history.hostLevelCacheMaxSize"]; len(v) != 1 || v[0].Value.(int) <= 0 || v[0].Value.(int) > 4096 {
		t.Errorf("history.hostLevelCacheMaxSize: %+v, want one value of at most 4,096", v)
	}
	if v := dyn["matching.enableFairness"]; len(v) != 1 || v[0].Value != true {
		t.Errorf("matching.enableFairness: %+v, want true", v)
	}
	for _, p := range temporalProcs {
		if env := c.recipes[p.name].env; !slices.Contains(env, "GOGC=400") {
			t.Errorf("%s: no GOGC=400 in its environment", p.name)
		}
	}
	t.Setenv("GOGC", "150")
	if env := temporalEnv(); slices.Contains(env, "GOGC=400") || !slices.Contains(env, "GOGC=150") {
		t.Error("GOGC=150 set, but the Temporal processes would not keep it")
	}
}
