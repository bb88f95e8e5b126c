package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/cluster"
	"github.com/hookrelay/hookrelay/testenv"
)

// BenchmarkCluster measures hookrelay on the production-shaped stack of
// `make run-cluster` (cluster/: PostgreSQL, a Temporal cluster built from
// go.temporal.io/server on it, one process per service with two history
// hosts sharing 16 shards, its Web UI, two `hookrelay api` (the benchmark
// publishes to the first) and two `hookrelay worker` processes, bin/ as `make
// cluster-bins` and `make build` leave it), all on this machine, with the
// phases of BenchmarkShipped, the overload included, and the same baselines
// in the same run: a bare workflow running one HTTP activity on the same Temporal
// server, and the direct-POST limit.
func BenchmarkCluster(b *testing.B) {
	for range b.N {
		r := newRun(b, "hookrelay on the production-shaped cluster (make run-cluster)")
		r.orderedOneKey = 25
		r.run(startCluster, "saturated", "paced", "fanout", "histories", "peer", "ordered", "overload", "neighbours")
	}
}

// startCluster starts the stack in a fresh directory, stopped when the
// benchmark ends.
func startCluster(b *testing.B) *devServer {
	// Under /tmp itself: PostgreSQL runs as its own user under root and
	// must traverse every parent directory.
	dir, err := os.MkdirTemp("", "hookrelay-bench-cluster-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		b.Fatal(err)
	}
	benchDir = dir
	cfg, err := cluster.Defaults(dir)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Logger, cfg.APIAddr = testenv.Logger(), ""
	cfg.Env = append(cfg.Env, "HOOKRELAY_METRICS_TOKEN="+benchMetricsToken)
	begin := time.Now()
	c, err := cluster.Start(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Stop(); _ = os.RemoveAll(dir) })
	return &devServer{api: c.API, temporal: c.Temporal, pgURL: c.PG.URL, dataDir: dir,
		logPath: filepath.Join(dir, "api-1.log"), startup: time.Since(begin)}
}
