package bench

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hitReceiver is the webhook receiver of every phase, hookrelay's and the
// baseline's alike: it reads the body, answers 204 and notes when each
// (Webhook-Id, path) first arrived.
type hitReceiver struct {
	url   string
	mu    sync.Mutex
	first map[string]time.Time
	dups  atomic.Int64
}

func newHitReceiver(b *testing.B) *hitReceiver {
	r := &hitReceiver{first: map[string]time.Time{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	r.url = "http://" + ln.Addr().String()
	return r
}

// eventID is the event a request delivers: its Webhook-Id, or the peer's
// idempotency key (peer_test.go).
func eventID(req *http.Request) string {
	if id := req.Header.Get("Webhook-Id"); id != "" {
		return id
	}
	return req.Header.Get(convoyIDHeader)
}

func (r *hitReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	now, k := time.Now(), hitKey(eventID(req), req.URL.Path)
	r.mu.Lock()
	if _, seen := r.first[k]; seen {
		r.dups.Add(1)
	} else {
		r.first[k] = now
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// hitKey names one expected receipt: an id at a path.
func hitKey(id, path string) string { return id + " " + path }

func (r *hitReceiver) when(k string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.first[k]
	return t, ok
}

// waitAll waits until every key has arrived or limit passes, and returns how
// many have not.
func (r *hitReceiver) waitAll(keys []string, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		missing := 0
		r.mu.Lock()
		for _, k := range keys {
			if _, ok := r.first[k]; !ok {
				missing++
			}
		}
		r.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shot is one publication: the receipts it should cause, when it was sent
// and answered, and its error.
type shot struct {
	keys           []string
	sent, answered time.Time
	err            error
	workflowID     string // of its (first) delivery
}

// sendFunc makes the i-th publication of a phase.
type sendFunc func(i int) shot

// closedLoop makes n publications from workers goroutines, each waiting for
// its answer before the next: as fast as the system answers.
func closedLoop(n, workers int, send sendFunc) []shot {
	shots := make([]shot, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				shots[i] = send(i)
			}
		}()
	}
	wg.Wait()
	return shots
}

// openLoop makes rate publications a second for d, each on schedule in its
// own goroutine whatever the earlier ones' answers (at most 2,000 in flight:
// past that the schedule slips, which the phase's rate then shows).
func openLoop(rate float64, d time.Duration, send sendFunc) []shot {
	n := int(rate * d.Seconds())
	shots := make([]shot, n)
	sem := make(chan struct{}, 2000)
	var wg sync.WaitGroup
	start, gap := time.Now(), time.Duration(float64(time.Second)/rate)
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			shots[i] = send(i)
		}()
	}
	wg.Wait()
	return shots
}

// phaseResult is what one phase measured.
type phaseResult struct {
	name                   string
	events, receipts       int
	errors, lost           int
	perSecond              float64          // receipts / (first send → last receipt)
	e2e                    [3]time.Duration // publish → receipt p50, p95, p99
	pub                    [4]time.Duration // publish answer p50, p95, p99, max
	sendEnd, lastReceipt   time.Time
	firstSend              time.Time
	load, cpu              string
	workflowIDs            []string
	publishedPerSecondSent float64
	// arrivals are when a quarter, half, three quarters, nine tenths and
	// all of the receipts had arrived, from the first send: a start queue
	// that idles at the end shows as a long last step.
	arrivals [5]time.Duration
}

// measure waits up to limit for the receipts of shots and sums the phase up.
func measure(name string, rcv *hitReceiver, shots []shot, limit time.Duration) phaseResult {
	r := phaseResult{name: name, events: len(shots)}
	var keys []string
	var pub, e2e, arrived []time.Duration
	for _, s := range shots {
		if s.err != nil {
			r.errors++
			continue
		}
		keys = append(keys, s.keys...)
		pub = append(pub, s.answered.Sub(s.sent))
		if r.firstSend.IsZero() || s.sent.Before(r.firstSend) {
			r.firstSend = s.sent
		}
		r.sendEnd = later(r.sendEnd, s.answered)
		if s.workflowID != "" && len(r.workflowIDs) < 10 {
			r.workflowIDs = append(r.workflowIDs, s.workflowID)
		}
	}
	r.lost = rcv.waitAll(keys, limit)
	for _, s := range shots {
		for _, k := range s.keys {
			if at, ok := rcv.when(k); ok && s.err == nil {
				e2e = append(e2e, at.Sub(s.sent))
				arrived = append(arrived, at.Sub(r.firstSend))
				r.lastReceipt = later(r.lastReceipt, at)
			}
		}
	}
	r.receipts = len(e2e)
	writeTrace(name, rcv, shots, r.firstSend)
	if span := r.lastReceipt.Sub(r.firstSend); span > 0 {
		r.perSecond = float64(r.receipts) / span.Seconds()
	}
	if span := r.sendEnd.Sub(r.firstSend); span > 0 {
		r.publishedPerSecondSent = float64(len(pub)) / span.Seconds()
	}
	r.e2e = [3]time.Duration{pct(e2e, 0.50), pct(e2e, 0.95), pct(e2e, 0.99)}
	r.pub = [4]time.Duration{pct(pub, 0.50), pct(pub, 0.95), pct(pub, 0.99), pct(pub, 1)}
	r.arrivals = [5]time.Duration{pct(arrived, 0.25), pct(arrived, 0.5), pct(arrived, 0.75), pct(arrived, 0.9), pct(arrived, 1)}
	return r
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// pct is the p-quantile of ds (sorted in place), 0 when empty.
func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[int(p*float64(len(ds)-1))]
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", millis(d))
}
