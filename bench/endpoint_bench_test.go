package bench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"
	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// The endpoint-health load: HOOKRELAY_BENCH_RATE attempts a second for
// HOOKRELAY_BENCH_SECONDS, from HOOKRELAY_BENCH_WORKERS goroutines, the
// endpoint workflow continuing as new every HOOKRELAY_BENCH_SIGNALS_PER_RUN
// signals or probe timers (500 in production; fewer here so that a minute
// shows several runs).
const (
	defaultRate          = 500
	defaultSeconds       = 60
	defaultWorkers       = 48
	defaultSignalsPerRun = 5
	poolDeliveries       = 500              // the load cycles through them, attempt numbers rising
	failPeriod           = 15 * time.Second // the receiver fails (503) for the last failFor of each
	failFor              = 2 * time.Second
	trickleEvery         = 2 * time.Second // one real Delivery workflow started alongside
	// eventsPerSignal bounds one run's history: a signal brings at most a
	// workflow task, a few activities and timers (about 20 events).
	eventsPerSignal = 30
)

// benchPolicy disables the endpoint after 50 consecutive failures (a tenth
// of a second at 500/s) and probes it every second.
const benchPolicy = `{"custom":{"kind":"fixed","interval_seconds":1},"max_attempts":100,
	"health":{"window_seconds":60,"disable_consecutive":50,"probe_interval_seconds":1}}`

type loadConfig struct {
	rate, workers, signalsPerRun int
	duration                     time.Duration
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// fixture is one endpoint (one receiver URL) with its pool of deliveries.
type fixture struct {
	st     *store.Store
	sub    store.Subscription
	health policies.Health
	rcv    *phasedReceiver
	pool   []string
}

func newFixture(b *testing.B, st *store.Store, typ string) fixture {
	f := fixture{st: st, rcv: &phasedReceiver{}}
	f.sub = store.Subscription{AccountID: store.DefaultAccount, URL: serve(b, &http.Server{Handler: f.rcv}) + "/" + typ,
		EventTypes: []string{typ}, Policy: policies.NameCustom, RetryPolicy: store.RawJSON(benchPolicy), Active: true}
	p, err := starter.PolicyWith(f.sub, policies.EdgeDefaults{})
	if err == nil {
		err = st.CreateSubscription(context.Background(), &f.sub)
	}
	if err != nil {
		b.Fatal(err)
	}
	f.health = p.Health
	f.pool = make([]string, poolDeliveries)
	parallel(poolDeliveries, func(i int) {
		d, err := f.publish()
		if err != nil {
			b.Error(err)
		}
		f.pool[i] = d.ID
	})
	return f
}

// publish stores one event for the fixture's subscription: one delivery.
func (f fixture) publish() (store.Delivery, error) {
	pub, err := f.st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount,
		Type: f.sub.EventTypes[0], Data: store.RawJSON(`{"bench":true}`)})
	if err != nil || len(pub.Deliveries) != 1 {
		return store.Delivery{}, fmt.Errorf("publish: %d deliveries, %v", len(pub.Deliveries), err)
	}
	return pub.Deliveries[0], nil
}

// loadResult is what one paced run of Deliver calls came to.
type loadResult struct {
	made, skipped, failed, dropped atomic.Int64
	mu                             sync.Mutex
	firstErr                       error
	wall, cpu                      time.Duration
	lat                            []time.Duration
}

// drive calls the real Deliver activity at cfg.rate for cfg.duration, call k
// making attempt k/len(pool) of delivery k%len(pool). A call finding the
// endpoint disabled is skipped (no request, nothing recorded), as it is for a
// Delivery workflow; a tick finding a second's backlog queued is dropped.
func drive(acts *activities.Activities, f fixture, cfg loadConfig) *loadResult {
	res := &loadResult{}
	jobs := make(chan int, cfg.rate)
	var wg sync.WaitGroup
	for range cfg.workers {
		wg.Go(func() { res.work(acts, f, jobs) })
	}
	cpu0, start := cpuTime(), time.Now()
	f.rcv.start.Store(start.UnixNano())
	tick := time.NewTicker(5 * time.Millisecond)
	issued := 0
	for now := start; now.Sub(start) < cfg.duration; now = <-tick.C {
		for due := int(now.Sub(start).Seconds() * float64(cfg.rate)); issued < due; issued++ {
			select {
			case jobs <- issued:
			default:
				res.dropped.Add(1)
			}
		}
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	res.wall, res.cpu = time.Since(start), cpuTime()-cpu0
	return res
}

// work makes the calls it takes from jobs.
func (r *loadResult) work(acts *activities.Activities, f fixture, jobs <-chan int) {
	var lat []time.Duration
	for k := range jobs {
		t0 := time.Now()
		out, err := acts.Deliver(context.Background(), workflows.DeliverInput{
			DeliveryID: f.pool[k%len(f.pool)], Attempt: k / len(f.pool), ScheduledAt: t0,
			Timeout: 10 * time.Second, Health: f.health})
		switch {
		case err != nil:
			r.mu.Lock()
			r.firstErr = cmp.Or(r.firstErr, err)
			r.mu.Unlock()
			r.failed.Add(1)
		case out.Skipped:
			r.skipped.Add(1)
		default:
			r.made.Add(1)
			lat = append(lat, time.Since(t0))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat = append(r.lat, lat...)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report logs and reports one load's figures under name.
func (r *loadResult) report(b *testing.B, name string) {
	made := r.made.Load()
	if r.firstErr != nil {
		b.Errorf("%s: %d Deliver calls failed, first: %v", name, r.failed.Load(), r.firstErr)
	}
	tries := float64(made+r.skipped.Load()) / r.wall.Seconds()
	if len(r.lat) == 0 {
		b.Errorf("%s: no attempt made", name)
		return
	}
	s := summarize(r.lat, r.wall)
	b.ReportMetric(tries, name+"_calls_per_s")
	b.ReportMetric(s.perSecond, name+"_attempts_per_s")
	b.ReportMetric(float64(s.p50.Microseconds())/1000, name+"_p50_ms")
	b.ReportMetric(float64(s.p99.Microseconds())/1000, name+"_p99_ms")
	b.ReportMetric(r.cpu.Seconds()*1000/float64(made), name+"_cpu_ms_per_attempt")
	b.Logf("%s: %.1f calls/s, %.1f attempts/s over %v: %d attempts, %d skipped (endpoint disabled), %d ticks dropped, "+
		"%d errors; latency p50 %v p95 %v p99 %v; bench process CPU %v (%.2f ms/attempt)",
		name, tries, s.perSecond, r.wall.Round(time.Millisecond), made, r.skipped.Load(), r.dropped.Load(),
		r.failed.Load(), s.p50, s.p95, s.p99, r.cpu.Round(time.Millisecond), r.cpu.Seconds()*1000/float64(made))
}

// BenchmarkEndpointHealth drives one endpoint with the real Deliver activity
// (it records each attempt and its counters in PostgreSQL and signals the
// endpoint workflow, on a real worker and the Temporal dev server) while the
// receiver fails 2 s in every 15 s: the endpoint is disabled, probed and
// re-enabled a few times a minute. It checks that no signal was rejected or
// lost, that each run's history stays under a bound, and that the counters
// equal the attempts recorded; a baseline runs the same load on another
// endpoint with signalling off.
func BenchmarkEndpointHealth(b *testing.B) {
	cfg := loadConfig{
		rate: envInt("HOOKRELAY_BENCH_RATE", defaultRate), workers: envInt("HOOKRELAY_BENCH_WORKERS", defaultWorkers),
		signalsPerRun: envInt("HOOKRELAY_BENCH_SIGNALS_PER_RUN", defaultSignalsPerRun),
		duration:      time.Duration(envInt("HOOKRELAY_BENCH_SECONDS", defaultSeconds)) * time.Second,
	}
	st, c := testenv.Store(b), testenv.Client(b)
	b.ReportMetric(float64(cfg.rate), "target_per_s")
	for i := 0; i < b.N; i++ {
		f := newFixture(b, st, fmt.Sprintf("bench.base%d", i))
		res := drive(activities.New(st, slog.New(&signalCounter{}), testenv.Egress()), f, cfg) // Temporal nil: no signals
		res.report(b, "baseline")
		checkCounters(b, f, res, "baseline")
		runHealthLoad(b, st, c, cfg, i)
	}
}

func runHealthLoad(b *testing.B, st *store.Store, c client.Client, cfg loadConfig, run int) {
	f := newFixture(b, st, fmt.Sprintf("bench.health%d", run))
	counter := &signalCounter{}
	logger := slog.New(counter)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = worker.Run(ctx, c, st, logger, worker.Options{HTTPConcurrency: 50, Egress: testenv.Egress()})
	})
	defer func() { cancel(); wg.Wait() }()
	wr, err := c.ExecuteWorkflow(ctx, workflows.EndpointOptions(workflows.DefaultQueues(), f.sub.EndpointID), workflows.EndpointWorkflowType,
		workflows.EndpointInput{EndpointID: f.sub.EndpointID, Health: f.health, MaxSignalsPerRun: cfg.signalsPerRun})
	if err != nil {
		b.Fatal(err)
	}
	acts := activities.New(st, logger, testenv.Egress())
	acts.Temporal = c
	var started atomic.Int64
	go func() { // real Delivery workflows: what the endpoint workflow probes and releases
		s := &starter.Starter{Store: st, Temporal: c, Logger: logger}
		for end := time.Now().Add(cfg.duration); time.Now().Before(end); time.Sleep(trickleEvery) {
			d, err := f.publish()
			if err == nil {
				err = s.Start(ctx, []store.Delivery{d})
			}
			if err != nil {
				b.Errorf("start delivery: %v", err)
			}
			started.Add(1)
		}
	}()
	res := drive(acts, f, cfg)
	f.rcv.healed.Store(true)
	res.report(b, "health")
	runs, sent := settledHistory(b, c, wr, counter)
	checkHistory(b, runs, sent, counter.failed.Load(), cfg)
	checkCounters(b, f, res, "health")
	b.Logf("health: %d real Delivery workflows started alongside (probed and released by the endpoint workflow)",
		started.Load())
}

// runStats is one run of the endpoint workflow.
type runStats struct{ events, signals int }

// settledHistory waits until every signal the activities sent is in the
// endpoint workflow's history (at most two minutes), and returns its runs and
// the number of signals sent.
func settledHistory(b *testing.B, c client.Client, wr client.WorkflowRun, counter *signalCounter) ([]runStats, int64) {
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		runs, err := histories(c, wr.GetID(), wr.GetRunID())
		if err != nil {
			b.Fatal(err)
		}
		got, sent := 0, counter.sent.Load()
		for _, r := range runs {
			got += r.signals
		}
		if int64(got) == sent || time.Now().After(deadline) {
			return runs, sent
		}
	}
}

// histories follows the workflow from runID through its continue-as-new chain.
func histories(c client.Client, id, runID string) ([]runStats, error) {
	var runs []runStats
	for runID != "" {
		it := c.GetWorkflowHistory(context.Background(), id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var r runStats
		next := ""
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return nil, fmt.Errorf("history of %s/%s: %w", id, runID, err)
			}
			r.events++
			switch ev.GetEventType() {
			case enums.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				r.signals++
			case enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				next = ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
			}
		}
		runs = append(runs, r)
		runID = next
	}
	return runs, nil
}

func checkHistory(b *testing.B, runs []runStats, sent, failed int64, cfg loadConfig) {
	bound := eventsPerSignal*cfg.signalsPerRun + 50
	signals, events, largest := 0, 0, 0
	per := ""
	for _, r := range runs {
		signals += r.signals
		events += r.events
		largest = max(largest, r.events)
		per += fmt.Sprintf(" %d/%d", r.events, r.signals)
	}
	b.ReportMetric(float64(sent), "signals_sent")
	b.ReportMetric(float64(failed), "signals_rejected")
	b.ReportMetric(float64(len(runs)), "workflow_runs")
	b.ReportMetric(float64(largest), "max_events_per_run")
	b.Logf("endpoint workflow: %d signals sent by Deliver, %d rejected, %d in its history; %d runs "+
		"(continue-as-new every %d signals), events/signals per run:%s; largest run %d events (bound %d), %d events in all",
		sent, failed, signals, len(runs), cfg.signalsPerRun, per, largest, bound, events)
	if failed > 0 || int64(signals) != sent || largest > bound {
		b.Errorf("endpoint workflow: signals rejected, lost or a run over its bound (see above)")
	}
}

// checkCounters compares the endpoint's counters (totals and per-minute
// buckets) with its attempts rows, all read in one statement (one snapshot),
// and the pool's attempts rows with the attempts the load made.
func checkCounters(b *testing.B, f fixture, res *loadResult, name string) {
	var c struct{ Attempts, Failures, BucketAttempts, BucketFailures, Rows, RowFailures, PoolRows, Disabled int64 }
	err := f.st.DB().QueryRowContext(context.Background(), `SELECT
			(SELECT attempts FROM endpoints WHERE id = $1), (SELECT failures FROM endpoints WHERE id = $1),
			(SELECT COALESCE(SUM(attempts), 0) FROM endpoint_buckets WHERE endpoint_id = $1),
			(SELECT COALESCE(SUM(failures), 0) FROM endpoint_buckets WHERE endpoint_id = $1),
			(SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1),
			(SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
				WHERE d.endpoint_id = $1 AND NOT a.success),
			(SELECT count(*) FROM attempts WHERE delivery_id = ANY($2)),
			(SELECT count(*) FROM endpoint_state_changes WHERE endpoint_id = $1 AND to_state = 'disabled')`,
		f.sub.EndpointID, pq.Array(f.pool)).Scan(&c.Attempts, &c.Failures, &c.BucketAttempts, &c.BucketFailures,
		&c.Rows, &c.RowFailures, &c.PoolRows, &c.Disabled)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(c.Rows), name+"_attempt_rows")
	b.ReportMetric(float64(c.Disabled), name+"_disabled_times")
	b.Logf("%s counters: endpoints %d attempts/%d failures, endpoint_buckets %d/%d, attempts rows %d/%d "+
		"(%d of them the load's, which made %d); disabled %d times",
		name, c.Attempts, c.Failures, c.BucketAttempts, c.BucketFailures, c.Rows, c.RowFailures,
		c.PoolRows, res.made.Load(), c.Disabled)
	if c.Attempts != c.Rows || c.BucketAttempts != c.Rows || c.Failures != c.RowFailures ||
		c.BucketFailures != c.RowFailures || c.PoolRows != res.made.Load() {
		b.Errorf("%s: counters are not exact (see above)", name)
	}
}
