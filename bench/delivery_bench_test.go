// Package bench measures hookrelay on the real servers it runs on. It holds
// benchmarks only; `make bench` runs them, the tests do not.
package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// The load. Throughput is measured saturated: benchEvents events from
// benchConcurrency publishers as fast as they go (the dev server starts about
// 100 workflows a second on 2 cores). Latency is measured paced, below
// saturation, so that it is the path's own and not queueing: pacedEvents at
// pacedRate a second.
const (
	benchEvents      = 600
	benchConcurrency = 16
	pacedEvents      = 200
	pacedRate        = 20
)

// load says how to send a run's events: n of them, from workers publishers,
// at most rate a second (0: as fast as they go).
type load struct {
	n, workers int
	rate       float64
}

var (
	saturated = load{n: benchEvents, workers: benchConcurrency}
	paced     = load{n: pacedEvents, workers: 4, rate: pacedRate}
)

// result is one run's figures.
type result struct {
	perSecond     float64
	p50, p95, p99 time.Duration
}

// report states the throughput of the saturated run and the latency of the
// paced one.
func report(b *testing.B, name string, sat, pace result) {
	b.ReportMetric(sat.perSecond, name+"_per_s")
	b.ReportMetric(float64(pace.p50.Microseconds())/1000, name+"_p50_ms")
	b.ReportMetric(float64(pace.p95.Microseconds())/1000, name+"_p95_ms")
	b.ReportMetric(float64(pace.p99.Microseconds())/1000, name+"_p99_ms")
	b.Logf("%s: saturated %.1f/s (%d events, %d publishers; latency there p50 %v p99 %v); paced %d events at %d/s: latency p50 %v p95 %v p99 %v",
		name, sat.perSecond, saturated.n, saturated.workers, sat.p50.Round(time.Millisecond), sat.p99.Round(time.Millisecond),
		paced.n, pacedRate, pace.p50.Round(time.Millisecond), pace.p95.Round(time.Millisecond), pace.p99.Round(time.Millisecond))
}

// summarize turns latencies and the run's wall time into a result.
func summarize(lat []time.Duration, wall time.Duration) result {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	return result{perSecond: float64(len(lat)) / wall.Seconds(), p50: q(0.50), p95: q(0.95), p99: q(0.99)}
}

// BenchmarkDelivery is an extra (`make bench-extra`), on the tests' in-memory
// dev server that no user runs; BenchmarkShipped measures what users run.
// It publishes events through the real HTTP API to a real
// receiver (first-attempt successes) and, in the same run on the same
// Temporal dev server, starts as many bare workflows that each run one no-op
// activity: the baseline. It reports throughput and latency of both and their
// ratio.
func BenchmarkDelivery(b *testing.B) {
	st := testenv.Store(b)
	c := testenv.Client(b)
	for i := 0; i < b.N; i++ {
		baseSat, basePace := runBaseline(b, c, saturated), runBaseline(b, c, paced)
		hrSat, hrPace := runHookrelay(b, st, c, 2*i, saturated), runHookrelay(b, st, c, 2*i+1, paced)
		report(b, "baseline", baseSat, basePace)
		report(b, "hookrelay", hrSat, hrPace)
		b.ReportMetric(hrSat.perSecond/baseSat.perSecond, "throughput_ratio")
		b.ReportMetric(float64(hrPace.p50)/float64(basePace.p50), "p50_ratio")
	}
}

// runHookrelay measures publish (HTTP request sent) to receipt (request
// arrived at the receiver) for l.n events.
func runHookrelay(b *testing.B, st *store.Store, c client.Client, run int, l load) result {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = worker.Run(ctx, c, st, testenv.Logger(), worker.Options{HTTPConcurrency: 200, Egress: testenv.Egress()})
	}()
	var mu sync.Mutex
	received := map[string]time.Time{}
	rcv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Webhook-Id")
		mu.Lock()
		received[id] = time.Now()
		mu.Unlock()
	})}
	rcvURL := serve(b, rcv)
	logger := testenv.Logger()
	apiURL := serve(b, &http.Server{Handler: api.New(&api.Server{Store: st, Temporal: c, Logger: logger, Auth: api.Auth{Open: true}, Egress: testenv.Egress(),
		Starter: &starter.Starter{Store: st, Temporal: c, Logger: logger}})})
	post(b, apiURL+"/v1/subscriptions", fmt.Sprintf(`{"url":%q,"event_types":["bench.%d"],"policy":"eventgrid"}`, rcvURL, run))
	sent := make([]time.Time, l.n)
	start := time.Now()
	parallelLoad(l, func(i int) {
		sent[i] = time.Now()
		post(b, apiURL+"/v1/events", fmt.Sprintf(`{"id":"r%d-e%d","type":"bench.%d","data":{"n":%d}}`, run, i, run, i))
	})
	waitUntil(b, func() bool { mu.Lock(); defer mu.Unlock(); return len(received) == l.n })
	wall := time.Since(start)
	lat := make([]time.Duration, l.n)
	for i := range lat {
		lat[i] = received[fmt.Sprintf("r%d-e%d", run, i)].Sub(sent[i])
	}
	return summarize(lat, wall)
}

// runBaseline measures workflow start to activity execution for a bare
// workflow with one no-op activity, on the same server.
func runBaseline(b *testing.B, c client.Client, l load) result {
	var mu sync.Mutex
	ran := map[string]time.Time{}
	noop := func(ctx context.Context) error {
		mu.Lock()
		ran[activity.GetInfo(ctx).WorkflowExecution.ID] = time.Now()
		mu.Unlock()
		return nil
	}
	wf := func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		return workflow.ExecuteActivity(ctx, "Noop").Get(ctx, nil)
	}
	w := sdkworker.New(c, "bench-baseline", sdkworker.Options{MaxConcurrentActivityExecutionSize: 200})
	w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "Baseline"})
	w.RegisterActivityWithOptions(noop, activity.RegisterOptions{Name: "Noop"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	prefix := fmt.Sprintf("baseline-%d-", time.Now().UnixNano())
	sent := make([]time.Time, l.n)
	start := time.Now()
	parallelLoad(l, func(i int) {
		sent[i] = time.Now()
		opts := client.StartWorkflowOptions{ID: fmt.Sprintf("%s%d", prefix, i), TaskQueue: "bench-baseline"}
		if _, err := c.ExecuteWorkflow(context.Background(), opts, "Baseline"); err != nil {
			b.Error(err)
		}
	})
	waitUntil(b, func() bool { mu.Lock(); defer mu.Unlock(); return len(ran) == l.n })
	wall := time.Since(start)
	lat := make([]time.Duration, l.n)
	for i := range lat {
		lat[i] = ran[fmt.Sprintf("%s%d", prefix, i)].Sub(sent[i])
	}
	return summarize(lat, wall)
}

// parallel calls fn(0..n-1) from benchConcurrency goroutines.
func parallel(n int, fn func(i int)) {
	parallelLoad(load{n: n, workers: benchConcurrency}, fn)
}

// parallelLoad calls fn(0..l.n-1) from l.workers goroutines, at most l.rate a
// second.
func parallelLoad(l load, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < l.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	var tick <-chan time.Time
	if l.rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / l.rate))
		defer t.Stop()
		tick = t.C
	}
	for i := 0; i < l.n; i++ {
		if tick != nil {
			<-tick
		}
		next <- i
	}
	close(next)
	wg.Wait()
}

func serve(b *testing.B, srv *http.Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func post(b *testing.B, url, body string) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		b.Error(err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b.Errorf("POST %s: %s", url, resp.Status)
	}
}

func waitUntil(b *testing.B, cond func() bool) {
	deadline := time.Now().Add(5 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatal("benchmark did not finish in 5 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
