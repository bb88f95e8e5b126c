package bench

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// How a noisyReceiver answers.
const (
	answerAtOnce = iota // 200 at once
	answerHeld          // 200 after hold
	answerNever         // holds the request until the client gives up
	answer503           // 503 at once
	answerDown          // closes the connection unanswered, as a receiver that is down
)

// noisyReceiver is the other endpoint of the noisy-neighbour phase: it
// answers as its mode says, and counts the requests per event, when each
// event was first answered 200, and how long each request it never answered
// was held before the sender cut it.
type noisyReceiver struct {
	url  string
	mode atomic.Int32
	hold time.Duration
	mu   sync.Mutex
	reqs map[string]int       // Webhook-Id (the peer's idempotency key) → requests
	ok   map[string]time.Time // Webhook-Id → first 200
	cuts []time.Duration      // how long never-answered requests were held
	ln   net.Listener
}

func newNoisyReceiver(b *testing.B, mode int32, hold time.Duration) *noisyReceiver {
	r := &noisyReceiver{hold: hold, reqs: map[string]int{}, ok: map[string]time.Time{}}
	r.mode.Store(mode)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	r.ln = ln
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	r.url = "http://" + ln.Addr().String()
	return r
}

func (r *noisyReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	id, arrived := eventID(req), time.Now()
	r.mu.Lock()
	r.reqs[id]++
	r.mu.Unlock()
	switch r.mode.Load() {
	case answerHeld:
		select {
		case <-time.After(r.hold):
		case <-req.Context().Done():
			return
		}
	case answerNever:
		<-req.Context().Done()
		r.mu.Lock()
		r.cuts = append(r.cuts, time.Since(arrived))
		r.mu.Unlock()
		return
	case answer503:
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case answerDown:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	r.mu.Lock()
	if _, seen := r.ok[id]; !seen {
		r.ok[id] = time.Now()
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// counts are the requests it got, the events answered 200, the events that
// got more than one request, and the shortest and longest cut.
func (r *noisyReceiver) counts() (requests, delivered, repeated int, cutMin, cutMax time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.reqs {
		if n > 1 {
			repeated++
		}
	}
	for i, c := range r.cuts {
		if i == 0 || c < cutMin {
			cutMin = c
		}
		cutMax = max(cutMax, c)
	}
	return r.requests(), len(r.ok), repeated, cutMin, cutMax
}

// requests is how many requests it got; r.mu is held.
func (r *noisyReceiver) requests() int {
	n := 0
	for _, k := range r.reqs {
		n += k
	}
	return n
}

// waitRequests waits until n requests came or limit passed.
func (r *noisyReceiver) waitRequests(n int, limit time.Duration) {
	r.waitFor(limit, func() bool { return r.requests() >= n })
}

// waitCuts waits until n requests were cut by their client, or limit
// passed.
func (r *noisyReceiver) waitCuts(n int, limit time.Duration) {
	r.waitFor(limit, func() bool { return len(r.cuts) >= n })
}

// lastDelivered is when the last event was first answered 200.
func (r *noisyReceiver) lastDelivered() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var last time.Time
	for _, at := range r.ok {
		last = later(last, at)
	}
	return last
}

// waitDelivered waits until n events were answered 200 or limit passes, and
// returns how long it took.
func (r *noisyReceiver) waitDelivered(n int, limit time.Duration) (time.Duration, bool) {
	return r.waitFor(limit, func() bool { return len(r.ok) >= n })
}

// waitFor waits until done, asked with the receiver's lock held, says so or
// limit passes, and returns how long it waited and whether done said so.
func (r *noisyReceiver) waitFor(limit time.Duration, done func() bool) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < limit {
		r.mu.Lock()
		ok := done()
		r.mu.Unlock()
		if ok {
			return time.Since(start), true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start), false
}
