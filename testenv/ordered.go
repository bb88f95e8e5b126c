package testenv

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// OrderedEvent is the data of the events an OrderedReceiver checks: their
// ordering key and their place in that key's publication order (from 0).
type OrderedEvent struct {
	Key string `json:"key"`
	N   int    `json:"n"`
}

// OrderedReceiver is a real HTTP receiver that checks ordered delivery
// (docs/ordering.md) as the requests come: it answers 500 to a share of
// them (FailRate, at random) and 200 to the rest, and notes a violation
// whenever a request of a key arrives while another of that key is in
// flight, or is for an event other than the one in flight's place: the
// same event again (a retry, or a duplicate send after a crash), or the
// next one once the one before it was answered 200 (or, told by Ended,
// ended otherwise). Events without a key are answered 200 and counted.
type OrderedReceiver struct {
	*httptest.Server
	// FailRate is the share of requests answered 500.
	FailRate float64
	// Fail, when set, says which requests are answered 500 instead.
	Fail func(OrderedEvent) bool

	mu         sync.Mutex
	busy       map[string]bool
	keys       map[string]*keyLog
	requests   int
	seen       map[string]int // delivery id → requests
	unkeyed    int
	violations []string
}

// keyLog is what one key's requests came to: the event of the latest
// request, whether it was answered 200, and each event's 200s.
type keyLog struct {
	last      int
	succeeded bool
	oks       map[int]int
}

// NewOrderedReceiver starts an OrderedReceiver until the test ends.
func NewOrderedReceiver(t testing.TB, failRate float64) *OrderedReceiver {
	r := &OrderedReceiver{FailRate: failRate, busy: map[string]bool{}, keys: map[string]*keyLog{}, seen: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *OrderedReceiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen[req.Header.Get("X-Hookrelay-Delivery")]++
	r.mu.Unlock()
	var body struct{ Data OrderedEvent }
	b, err := io.ReadAll(req.Body)
	if err == nil {
		err = json.Unmarshal(b, &body)
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ev := body.Data
	if ev.Key == "" {
		r.mu.Lock()
		r.unkeyed++
		r.mu.Unlock()
		return
	}
	r.arrive(ev)
	ok := rand.Float64() >= r.FailRate
	if r.Fail != nil {
		ok = !r.Fail(ev)
	}
	r.leave(ev, ok)
	if !ok {
		w.WriteHeader(http.StatusInternalServerError)
	}
}

// arrive checks and notes the start of a request for ev.
func (r *OrderedReceiver) arrive(ev OrderedEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if r.busy[ev.Key] {
		r.violate("key %q: event %d arrived while another request of the key was in flight", ev.Key, ev.N)
	}
	r.busy[ev.Key] = true
	k := r.keys[ev.Key]
	if k == nil {
		k = &keyLog{last: -1, succeeded: true, oks: map[int]int{}}
		r.keys[ev.Key] = k
	}
	switch {
	case ev.N == k.last:
	case ev.N == k.last+1 && k.succeeded:
		k.last, k.succeeded = ev.N, false
	default:
		r.violate("key %q: event %d arrived after event %d (answered 200: %v)", ev.Key, ev.N, k.last, k.succeeded)
	}
}

// leave notes the end of a request for ev, answered 200 when ok.
func (r *OrderedReceiver) leave(ev OrderedEvent, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.busy[ev.Key] = false
	if k := r.keys[ev.Key]; ok && k != nil {
		k.oks[ev.N]++
		if ev.N == k.last {
			k.succeeded = true
		}
	}
}

// Ended tells the receiver that event n of key ended without a 200 (it
// was skipped, say): the next event of the key may come.
func (r *OrderedReceiver) Ended(key string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k := r.keys[key]; k != nil && k.last == n {
		k.succeeded = true
	}
}

// Unkeyed is how many requests came for events without a key.
func (r *OrderedReceiver) Unkeyed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unkeyed
}

func (r *OrderedReceiver) violate(format string, args ...any) {
	if len(r.violations) < 20 {
		r.violations = append(r.violations, fmt.Sprintf(format, args...))
	}
}

// Violations are the order violations seen (the first 20).
func (r *OrderedReceiver) Violations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.violations...)
}

// Requests is how many requests came.
func (r *OrderedReceiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Seen is how many requests came for the delivery id.
func (r *OrderedReceiver) Seen(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[id]
}

// Delivered counts the events of key answered 200 at least once (the
// lost ones are the others), and the 200s beyond the first (duplicates).
func (r *OrderedReceiver) Delivered(key string) (events, duplicates int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.keys[key]
	if k == nil {
		return 0, 0
	}
	for _, n := range k.oks {
		events, duplicates = events+1, duplicates+n-1
	}
	return events, duplicates
}
