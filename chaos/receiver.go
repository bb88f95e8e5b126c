package chaos

import (
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// AttemptTimeout is the per-attempt timeout the scenarios' subscriptions
// set; the receiver's slow answers take longer than it.
const AttemptTimeout = 2 * time.Second

// behaviours are how a receiver answers: "ok" always 200; "flaky" 30 %
// 500s, 10 % slower than the attempt timeout, 5 % connection resets, by a
// hash of the delivery and attempt (repeatable); "hang" holds the first two
// attempts of every delivery past the timeout.
var behaviours = map[string]func(w http.ResponseWriter, r *http.Request) bool{
	"ok": func(http.ResponseWriter, *http.Request) bool { return true },
	"flaky": func(w http.ResponseWriter, r *http.Request) bool {
		h := fnv.New32a()
		h.Write([]byte(r.Header.Get("X-Hookrelay-Delivery") + "/" + r.Header.Get("X-Hookrelay-Attempt")))
		switch n := h.Sum32() % 100; {
		case n < 30:
			w.WriteHeader(http.StatusInternalServerError)
		case n < 40:
			sleep(r, AttemptTimeout+time.Second)
		case n < 45:
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
		default:
			return true
		}
		return false
	},
	"hang": func(w http.ResponseWriter, r *http.Request) bool {
		if a := r.Header.Get("X-Hookrelay-Attempt"); a == "1" || a == "2" {
			sleep(r, AttemptTimeout+time.Second)
			return false
		}
		return true
	},
}

func sleep(r *http.Request, d time.Duration) {
	select {
	case <-r.Context().Done():
	case <-time.After(d):
	}
}

// Receiver is a webhook receiver on loopback that logs every request by
// scenario (the first path segment of /SCENARIO/BEHAVIOUR): how many, and
// how many times each delivery was answered 200. BEHAVIOUR is "ok", "flaky"
// or "hang".
type Receiver struct {
	*httptest.Server
	mu        sync.Mutex
	requests  map[string]int
	delivered map[string]map[string]int // scenario → delivery id → 200s
	seen      map[string]int            // delivery id → requests
}

// NewReceiver starts a Receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{requests: map[string]int{}, delivered: map[string]map[string]int{}, seen: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// serve handles /<scenario>/<behaviour>.
func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	scenario, behaviour := parts[0], parts[len(parts)-1]
	r.mu.Lock()
	r.requests[scenario]++
	r.seen[req.Header.Get("X-Hookrelay-Delivery")]++
	r.mu.Unlock()
	if !behaviours[behaviour](w, req) {
		return
	}
	r.mu.Lock()
	if r.delivered[scenario] == nil {
		r.delivered[scenario] = map[string]int{}
	}
	r.delivered[scenario][req.Header.Get("X-Hookrelay-Delivery")]++
	r.mu.Unlock()
}

// Seen is how many requests came for the delivery id.
func (r *Receiver) Seen(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[id]
}

// Counts are a scenario's requests, and its deliveries answered 200 more
// than once (duplicates).
func (r *Receiver) Counts(scenario string) (requests, duplicates int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.delivered[scenario] {
		if n > 1 {
			duplicates += n - 1
		}
	}
	return r.requests[scenario], duplicates
}
