package starter

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookrelay/hookrelay/store"
)

// Defaults of a Queue.
const (
	// DefaultQueueWorkers is how many batches of starts run at once.
	DefaultQueueWorkers = 16
	// DefaultQueueSize bounds the deliveries waiting to be started.
	DefaultQueueSize = 20000
	// queueBatch bounds the deliveries one worker starts in one Start call
	// (one subscription lookup each, one MarkStarted for all). It is small:
	// a worker starts its batch one delivery after another, and a delivery
	// of another endpoint, queued meanwhile, waits for a worker to finish
	// its batch, however fair the order of the take (fair). Under a burst
	// that saturates Temporal a start takes hundreds of milliseconds, so a
	// batch of 32 kept other endpoints waiting for seconds (issue 51).
	queueBatch = 4
	// DefaultStartsPerEndpoint is how many workers may start one
	// endpoint's burst at once while another endpoint's deliveries are
	// being started (Queue.PerEndpoint). A start's time is then mostly
	// its wait in Temporal behind the others in flight, so a burst given
	// more workers gains little speed and makes every other endpoint's
	// starts wait as long (issue 51). Alone, a burst may use every worker
	// but freeWorkers: on the production-shaped cluster, whose starts take
	// longer, 4 held a lone burst well below the rate Temporal could go
	// (BENCHMARKS.md).
	DefaultStartsPerEndpoint = 2
	// freeWorkers are the workers one endpoint's deliveries never hold
	// all of, whatever PerEndpoint says: a delivery of another endpoint
	// finds one of them free (fair.maxHolders).
	freeWorkers = 2
	// troubledHolders is how many workers may start the deliveries of an
	// endpoint in trouble at once (Queue.Troubled), one in each batch.
	troubledHolders = 1
	// DefaultTroubledPerSecond is how many deliveries of an endpoint in
	// trouble are started a second while another endpoint's are being
	// started (Queue.TroubledPerSecond). One worker alone still starts
	// about 60 a second on a 2-core machine, most of what Temporal can
	// do there, and a healthy endpoint's starts waited twice as long
	// beside it; at 10 a second, on the production-shaped cluster (two
	// API processes, each pacing its own), a healthy endpoint's p95
	// beside a receiver that never answers was 63-81 ms, at 5 48-51 ms
	// (issue 51).
	DefaultTroubledPerSecond = 5
	// queueStartTimeout bounds one batch's calls to Temporal and PostgreSQL.
	queueStartTimeout = time.Minute
	// lagReportEvery is how often a queue that is behind says so in the log.
	lagReportEvery = 5 * time.Second
	// lagWorthReporting is the wait that makes a queue count as behind.
	lagWorthReporting = time.Second
)

// Queue starts the workflows of stored deliveries in the background, so that
// publishing answers as soon as the event and its deliveries are committed in
// PostgreSQL, whatever Temporal's speed or health. Starts run concurrently
// (Workers at once) and are bounded (Size waiting): when the queue is full,
// or the process stops first, the deliveries stay unstarted in PostgreSQL
// and the worker's sweeper starts them, as after a crash.
type Queue struct {
	Starter *Starter
	// Workers is how many batches are started at once; zero means
	// DefaultQueueWorkers.
	Workers int
	// Size bounds the deliveries waiting; zero means DefaultQueueSize.
	Size int
	// PerEndpoint is how many workers may start the deliveries of one
	// endpoint with a burst waiting (more than burstLine) at once while
	// another endpoint's deliveries are being started
	// (fair.besideHolders); zero means DefaultStartsPerEndpoint. Alone,
	// a burst may use every worker but freeWorkers (fair.maxHolders); so
	// may an endpoint with fewer waiting, one delivery each, beside
	// others too (fair.shortHolders).
	PerEndpoint int
	// Troubled, when set, tells the endpoints in trouble: slow or failing
	// (activities.Shares.Troubled). At most troubledHolders workers start
	// such an endpoint's deliveries at once, at TroubledPerSecond while
	// other endpoints' are being started, so that a receiver that holds
	// its requests, or a failure storm, whose every delivery goes on to
	// retry, leaves Temporal's time to the endpoints that answer
	// (docs/endpoints.md#isolation).
	Troubled func(endpointID string) bool
	// TroubledPerSecond bounds the deliveries of an endpoint in trouble
	// started a second while another endpoint's deliveries are being
	// started (fair.othersBusy); alone, it is started as fast as one
	// worker goes. Zero means DefaultTroubledPerSecond.
	TroubledPerSecond int

	once  sync.Once
	wait  *fair
	marks marks
	// lastWaitNs is how long the most recently taken delivery waited.
	lastWaitNs atomic.Int64
}

// queued is a delivery waiting to be started, and since when.
type queued struct {
	d  store.Delivery
	at time.Time
	// leased is when its lease for the sweeper ends (Queue.lease); zero
	// while it has none.
	leased time.Time
}

func (q *Queue) init() {
	q.once.Do(func() {
		size := q.Size
		if size <= 0 {
			size = DefaultQueueSize
		}
		q.wait = newFair(size)
	})
}

// Enqueue hands the deliveries not yet started to the queue without waiting.
// Those that do not fit are left to the sweeper, and logged.
func (q *Queue) Enqueue(ctx context.Context, ds []store.Delivery) {
	q.init()
	now, left := time.Now(), 0
	for _, d := range ds {
		if d.Started {
			continue
		}
		if !q.wait.put(queued{d: d, at: now}) {
			left++
		}
	}
	if left > 0 {
		q.Starter.Logger.WarnContext(ctx, "start_queue_full", "left_to_sweeper", left, "queued", q.wait.len())
	}
}

// Len is the number of deliveries waiting to be started.
func (q *Queue) Len() int {
	q.init()
	return q.wait.len()
}

// Run starts queued deliveries until ctx ends, logging the queue's lag every
// few seconds while it is behind, and leasing the deliveries that wait long
// from the sweeper (lease).
func (q *Queue) Run(ctx context.Context) {
	q.init()
	workers := q.Workers
	if workers <= 0 {
		workers = DefaultQueueWorkers
	}
	alone, beside := startBounds(workers, q.PerEndpoint)
	q.wait.bound(alone, beside, alone, q.Troubled)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.work(ctx, workers)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		Every(ctx, leaseEvery, func(ctx context.Context) { q.lease(ctx, time.Now()) })
	}()
	q.reportLag(ctx)
	wg.Wait()
	q.marks.wait()
	if n := q.wait.len(); n > 0 {
		q.endLeases()
		q.Starter.Logger.Warn("start_queue_stopped", "left_to_sweeper", n)
	}
}

// work takes its share of the deliveries waiting, the endpoints' in turn
// (fair), and starts them, until ctx ends.
func (q *Queue) work(ctx context.Context, workers int) {
	for {
		batch := q.wait.take(share(q.wait.len(), workers))
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-q.wait.ready:
			}
			continue
		}
		q.lastWaitNs.Store(int64(time.Since(batch[0].at)))
		ds := make([]store.Delivery, len(batch))
		for i, it := range batch {
			ds[i] = it.d
		}
		began := time.Now()
		q.start(ctx, ds)
		sleepUntil(ctx, began.Add(q.pause(batch)))
		q.wait.release(batch)
	}
}

// startBounds are the start queue's bounds on the workers one endpoint's
// deliveries hold at once (fair.bound): a burst alone, or an endpoint that
// keeps up, every worker but freeWorkers; a burst while another endpoint's
// deliveries are being started, perEndpoint (docs/endpoints.md#isolation).
func startBounds(workers, perEndpoint int) (alone, beside int) {
	return holders(workers, workers), holders(workers, perEndpoint)
}

// holders is how many of workers may start one endpoint's deliveries at
// once (fair's bounds): perEndpoint, or DefaultStartsPerEndpoint when
// zero, but never more than leaves freeWorkers free; zero (no bound) when
// there are no more workers than that.
func holders(workers, perEndpoint int) int {
	if workers <= freeWorkers {
		return 0
	}
	if perEndpoint <= 0 {
		perEndpoint = DefaultStartsPerEndpoint
	}
	return min(perEndpoint, workers-freeWorkers)
}

// share is how many of waiting deliveries one of workers takes: an even
// share, at most queueBatch. A worker starts its batch one delivery after
// another, so a worker that took more than its share would still be
// starting while the others idle, once the queue runs dry.
func share(waiting, workers int) int {
	return max(1, min(queueBatch, (waiting+workers-1)/workers))
}

// start starts one batch and hands the deliveries started over to be
// recorded as such a little later (marks); a failure is logged, and the
// sweeper retries.
func (q *Queue) start(ctx context.Context, ds []store.Delivery) {
	ctx, cancel := context.WithTimeout(ctx, queueStartTimeout)
	defer cancel()
	started, err := q.Starter.startUnmarked(ctx, ds)
	if err != nil {
		q.Starter.Logger.ErrorContext(ctx, "start_deliveries_failed", "count", len(ds), "error", err)
	}
	q.marks.add(ctx, q.Starter, started)
}

// reportLag logs, every lagReportEvery until ctx ends, how many deliveries
// wait and how long the last one started had waited, while that is more
// than lagWorthReporting or deliveries are waiting.
func (q *Queue) reportLag(ctx context.Context) {
	Every(ctx, lagReportEvery, func(ctx context.Context) {
		wait := time.Duration(q.lastWaitNs.Load())
		if n := q.wait.len(); n > 0 || wait > lagWorthReporting {
			q.Starter.Logger.WarnContext(ctx, "start_queue_lag", "queued", n, "last_wait", wait.Round(time.Millisecond))
		}
		q.lastWaitNs.Store(0)
	})
}

// pause is how long a batch's worker keeps it, from when it began to start
// it, before taking another: 1/TroubledPerSecond for each of its deliveries
// of an endpoint in trouble while others are being started, so that the
// endpoint, which no other worker takes meanwhile (troubledHolders), is
// started at that pace.
func (q *Queue) pause(batch []queued) time.Duration {
	if q.Troubled == nil {
		return 0
	}
	per := q.TroubledPerSecond
	if per <= 0 {
		per = DefaultTroubledPerSecond
	}
	perKey := map[string]int{}
	for _, it := range batch {
		perKey[it.d.EndpointID]++
	}
	n := 0
	for key, count := range perKey {
		if q.Troubled(key) && q.wait.othersBusy(key) {
			n += count
		}
	}
	return time.Duration(n) * time.Second / time.Duration(per)
}

// sleepUntil waits until the time until, or until ctx ends.
func sleepUntil(ctx context.Context, until time.Time) {
	d := time.Until(until)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
