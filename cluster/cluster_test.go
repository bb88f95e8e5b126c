package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/bench/results"
	"github.com/hookrelay/hookrelay/cluster"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

const (
	clusterEvents    = 1000
	clusterEndpoints = 50
)

// hits counts the requests a receiver got per Webhook-Id.
type hits struct {
	mu   sync.Mutex
	seen map[string]int
}

func (h *hits) ServeHTTP(_ http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen[r.Header.Get("Webhook-Id")]++
	h.mu.Unlock()
}

func (h *hits) counts() (events, duplicates int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.seen {
		events++
		duplicates += n - 1
	}
	return events, duplicates
}

// TestCluster: issues 13 and 25, on the production-shaped stack (make
// test-cluster): 1,000 events across 50 endpoints, one of the two workers
// killed (kill -9) midway and started again, every event delivered; then
// the throughput; then the failures a cluster must survive (failures_test.go);
// then `hookrelay versions` against it (versions_test.go).
// HOOKRELAY_CLUSTER_ONLY=kill-history,… runs only the failures it names.
func TestCluster(t *testing.T) {
	if os.Getenv("HOOKRELAY_CLUSTER") == "" {
		t.Skip("the cluster test runs under `make test-cluster` (HOOKRELAY_CLUSTER=1)")
	}
	begin := time.Now()
	c := startCluster(t)
	started := time.Since(begin)
	st, err := store.Open(context.Background(), c.PG.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkSettings(t, st)
	checkVisibility(t, c)
	out := results.Open(results.SuiteCluster)
	if os.Getenv("HOOKRELAY_CLUSTER_ONLY") == "" {
		deliverAll(t, c, st, started, out)
	}
	failures(t, c, st, out)
	checkVersions(t, c)
}

// record writes a line to the run's data file, when HOOKRELAY_RESULTS
// names one (RELIABILITY.md's tables are made from it).
func record(t *testing.T, out *results.Writer, phase string, figures map[string]float64, notes map[string]string) {
	t.Helper()
	if err := out.Add(phase, figures, notes); err != nil {
		t.Errorf("writing the results: %v", err)
	}
}

// checkSettings fails the test unless the cluster's PostgreSQL runs with the
// settings cluster.go and devenv give it (docs/operations.md).
func checkSettings(t *testing.T, st *store.Store) {
	var buffers, flush, compression string
	err := st.DB().QueryRowContext(t.Context(), `SELECT current_setting('shared_buffers'),
		current_setting('backend_flush_after'), current_setting('wal_compression')`).Scan(&buffers, &flush, &compression)
	if err != nil {
		t.Fatal(err)
	}
	if buffers != "512MB" || flush != "256kB" || compression != "lz4" {
		t.Errorf("shared_buffers %s, backend_flush_after %s, wal_compression %s; want 512MB, 256kB, lz4", buffers, flush, compression)
	}
}

// checkVisibility fails the test unless Temporal's visibility table kept
// the index of every column hookrelay's search attributes are mapped to
// (Keyword and Int ones) and none of the other custom columns'
// (cluster/visibility.go).
func checkVisibility(t *testing.T, c *cluster.Cluster) {
	db, err := sqlx.Open("postgres", c.PG.DatabaseURL("temporal_visibility"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var keywords, ints, unused int
	err = db.QueryRowContext(t.Context(), `SELECT count(*) FILTER (WHERE indexname ~ '^by_keyword_[0-9]+$'),
		count(*) FILTER (WHERE indexname ~ '^by_int_[0-9]+$'),
		count(*) FILTER (WHERE indexname ~ '^by_(bool|datetime|double|text|keyword_list)_[0-9]+$|^by_history_length$')
		FROM pg_indexes WHERE tablename = 'executions_visibility'`).Scan(&keywords, &ints, &unused)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, typ := range workflows.SearchAttributes() {
		want[typ]++
	}
	if keywords != want["Keyword"] || ints != want["Int"] || unused != 0 {
		t.Errorf("visibility indexes: %d keyword, %d int, %d unused; want %d, %d, 0", keywords, ints, unused,
			want["Keyword"], want["Int"])
	}
}

// startCluster starts the stack of `make run-cluster` in a fresh directory,
// stopped when the test ends; the directory (with every log) is removed
// unless the test failed.
func startCluster(t *testing.T) *cluster.Cluster {
	dir, err := os.MkdirTemp("", "hookrelay-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the stack's logs are kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	cfg, err := cluster.Defaults(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger, cfg.APIAddr = testenv.Logger(), ""
	c, err := cluster.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// deliverAll publishes clusterEvents events across clusterEndpoints
// endpoints with worker-1 killed midway, checks every one is delivered, and
// measures the throughput.
func deliverAll(t *testing.T, c *cluster.Cluster, st *store.Store, started time.Duration, out *results.Writer) {
	rcv := &hits{seen: map[string]int{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	for i := range clusterEndpoints {
		post(t, c.API+"/v1/subscriptions", "", fmt.Sprintf(`{"url": "%s/ep%d", "event_types": ["cluster.%d"], "policy": "custom",
			"retry_policy": {"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 30}}`, srv.URL, i, i))
	}
	publishStart := time.Now()
	publishAll(t, c)
	open := waitEnded(st, 5*time.Minute)
	took := time.Since(publishStart)
	events, dups := rcv.counts()
	var delivered int
	_ = st.DB().Get(&delivered, `SELECT count(*) FROM deliveries WHERE status = 'delivered'`)
	fmt.Printf("cluster: started in %.1f s; %d events to %d endpoints, a worker killed at 500: %d delivered, "+
		"%d received, %d duplicates, %d not ended; %.1f s from the first publish to the last delivery (%.1f events/s)\n",
		started.Seconds(), clusterEvents, clusterEndpoints, delivered, events, dups, open, took.Seconds(), float64(delivered)/took.Seconds())
	record(t, out, "worker killed", map[string]float64{"started_s": started.Seconds(), "events": clusterEvents,
		"endpoints": clusterEndpoints, "delivered": float64(delivered), "received": float64(events),
		"duplicates": float64(dups), "stuck": float64(open), "took_s": took.Seconds(), "per_second": float64(delivered) / took.Seconds()}, nil)
	if delivered != clusterEvents || events != clusterEvents || open != 0 {
		t.Fatalf("%d delivered, %d received, %d not ended: want %d, %d, 0", delivered, events, open, clusterEvents, clusterEvents)
	}
	throughput(t, c, st, srv.URL, out)
}

// throughput publishes 500 more events (8 publishers, no fault) and reports
// how fast they were delivered, beside the same 500 requests POSTed straight
// to the receiver by 8 senders (the baseline, same run).
func throughput(t *testing.T, c *cluster.Cluster, st *store.Store, receiver string, out *results.Writer) {
	const n = 500
	send := func(f func(i int)) time.Duration {
		var next atomic.Int32
		var wg sync.WaitGroup
		begin := time.Now()
		for range 8 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
					f(i)
				}
			})
		}
		wg.Wait()
		return time.Since(begin)
	}
	direct := send(func(i int) { post(t, fmt.Sprintf("%s/ep%d", receiver, i%clusterEndpoints), "", `{}`) })
	begin := time.Now()
	send(func(i int) {
		post(t, c.API+"/v1/events", fmt.Sprintf("tp-%d", i), fmt.Sprintf(`{"type": "cluster.%d", "data": {}}`, i%clusterEndpoints))
	})
	open := waitEnded(st, 5*time.Minute)
	took := time.Since(begin)
	fmt.Printf("cluster throughput: %d events published and delivered in %.1f s (%.1f/s, %d not ended); "+
		"baseline, %d direct POSTs to the receiver: %.2f s (%.0f/s)\n",
		n, took.Seconds(), n/took.Seconds(), open, n, direct.Seconds(), n/direct.Seconds())
	record(t, out, "throughput", map[string]float64{"events": n, "took_s": took.Seconds(), "per_second": n / took.Seconds(),
		"stuck": float64(open), "direct_per_second": n / direct.Seconds()}, nil)
}

// publishAll publishes the events (8 at a time, each with an
// Idempotency-Key, retried until accepted), killing worker-1 midway and
// starting it again 2 s later.
func publishAll(t *testing.T, c *cluster.Cluster) {
	var next atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < clusterEvents; i = int(next.Add(1)) - 1 {
				if i == clusterEvents/2 {
					restart(t, c, "worker-1", 2*time.Second)
				}
				post(t, c.API+"/v1/events", fmt.Sprintf("cluster-%d", i),
					fmt.Sprintf(`{"type": "cluster.%d", "data": {"n": %d}}`, i%clusterEndpoints, i))
			}
		})
	}
	wg.Wait()
}

// restart kills (kill -9) process name and starts it again after pause.
func restart(t *testing.T, c *cluster.Cluster, name string, pause time.Duration) {
	if err := c.Kill(name); err != nil {
		t.Error(err)
		return
	}
	time.Sleep(pause)
	if err := c.StartProcess(context.Background(), name); err != nil {
		t.Error(err)
	}
}

// post POSTs body (with an Idempotency-Key when key is set), retrying until
// it is accepted.
func post(t *testing.T, url, key, body string) {
	code, b, err := testenv.Post(url, key, body)
	if err != nil || code >= 300 {
		t.Errorf("POST %s: %d %s (%v)", url, code, b, err)
	}
}

// waitEnded waits until every delivery has ended; it returns how many had
// not after limit.
func waitEnded(st *store.Store, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		var open int
		err := st.DB().Get(&open, `SELECT count(*) FROM deliveries WHERE status NOT IN `+policies.SQLList(policies.FinalStatuses))
		if err == nil && open == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			return open
		}
		time.Sleep(500 * time.Millisecond)
	}
}
