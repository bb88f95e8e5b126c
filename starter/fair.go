package starter

import (
	"slices"
	"sync"
	"time"
)

// fair holds the deliveries waiting to be started, one line per endpoint,
// and serves the lines in turn: a batch takes the first delivery of each
// endpoint that has one, then the second, and so on. A burst for one
// endpoint then waits behind itself only: a delivery to another endpoint,
// queued after the burst, is in the next batch taken
// (docs/endpoints.md#isolation). The zero value is not usable (newFair).
type fair struct {
	mu    sync.Mutex
	lines map[string][]queued
	turns []string // endpoints with a line, in the order they are served
	n     int
	size  int
	// holders counts, per endpoint, the takers holding a batch with one of
	// its deliveries (until release); maxHolders bounds it (zero: no
	// bound), so that one endpoint's burst never holds every taker and a
	// delivery of another endpoint finds one free.
	holders    map[string]int
	maxHolders int
	// besideHolders bounds the takers holding a burst while another
	// endpoint is being started (othersBusy; zero: maxHolders, never more
	// than maxHolders when both are set): alone a burst drains as fast
	// as maxHolders lets it, beside others fewer of its starts wait in
	// Temporal ahead of theirs.
	besideHolders int
	// shortHolders bounds the takers holding an endpoint whose line is
	// short (burstLine or less), beside others or not: one that keeps up
	// with its deliveries may use every taker left free (zero, or fewer
	// than maxHolders: maxHolders).
	shortHolders int
	// burst is the longest line that is not a burst (burstLine; tests
	// may set another).
	burst int
	// troubled, when set, tells the endpoints in trouble (Queue.Troubled):
	// each is held by at most troubledHolders takers, with one of its
	// deliveries in a batch, so that its paced starts (Queue.pause) go
	// out one at a time, not several back to back.
	troubled func(endpointID string) bool
	// takenAt is when a delivery of each endpoint was last taken, kept
	// for busyWindow (othersBusy); forgottenAt is when the older ones
	// were last dropped.
	takenAt     map[string]time.Time
	forgottenAt time.Time
	// now is the clock; nil is time.Now.
	now func() time.Time
	// ready holds a token while deliveries may be waiting.
	ready chan struct{}
}

func newFair(size int) *fair {
	return &fair{lines: map[string][]queued{}, holders: map[string]int{}, takenAt: map[string]time.Time{},
		size: size, burst: burstLine, ready: make(chan struct{}, 1)}
}

// burstLine is the longest line that is not a burst: an endpoint whose
// line is longer is held by at most maxHolders takers, each taking several
// of its deliveries; one whose line is as short or shorter gives each taker
// one delivery, and may be held by up to shortHolders. A healthy endpoint
// whose starts slow down beside a burst (each taking hundreds of
// milliseconds in a saturated Temporal) then has its deliveries started
// side by side, not one after another (issue 51).
const burstLine = 32

// bound sets maxHolders, besideHolders, shortHolders and troubled.
func (f *fair) bound(maxHolders, besideHolders, shortHolders int, troubled func(endpointID string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.maxHolders, f.besideHolders, f.shortHolders, f.troubled = maxHolders, besideHolders, shortHolders, troubled
}

// put queues it at the end of its endpoint's line, false when size
// deliveries wait already.
func (f *fair) put(it queued) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n >= f.size {
		return false
	}
	key := it.d.EndpointID
	if len(f.lines[key]) == 0 {
		f.turns = append(f.turns, key)
	}
	f.lines[key] = append(f.lines[key], it)
	f.n++
	f.signal()
	return true
}

// take removes up to max deliveries, one endpoint's first after another's,
// skipping the endpoints held by maxHolders takers already; none when
// nothing waits that may be taken. The taker gives the batch back with
// release once it is started.
func (f *fair) take(max int) []queued {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []queued
	mine := map[string]bool{}
	for len(out) < max {
		i := slices.IndexFunc(f.turns, func(key string) bool {
			if mine[key] {
				return !f.short(key) && !f.inTrouble(key)
			}
			return f.free(key)
		})
		if i < 0 {
			break
		}
		key := f.turns[i]
		f.turns = slices.Delete(f.turns, i, i+1)
		if !mine[key] {
			mine[key] = true
			f.holders[key]++
			f.taken(key)
		}
		line := f.lines[key]
		out = append(out, line[0])
		if len(line) > 1 {
			f.lines[key] = line[1:]
			f.turns = append(f.turns, key)
		} else {
			delete(f.lines, key)
		}
	}
	f.n -= len(out)
	f.signalIfTakeable()
	return out
}

// release gives back a batch taken: its endpoints are held by one taker
// fewer.
func (f *fair) release(batch []queued) {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	for _, it := range batch {
		key := it.d.EndpointID
		if seen[key] {
			continue
		}
		seen[key] = true
		if f.holders[key]--; f.holders[key] <= 0 {
			delete(f.holders, key)
		}
	}
	f.signalIfTakeable()
}

// free reports whether a taker may take a delivery of the endpoint; f.mu
// is held. Whether the endpoint is in trouble, or another is being
// started beside a burst, is asked only of one some takers hold already.
func (f *fair) free(key string) bool {
	held, most := f.holders[key], f.maxHolders
	switch {
	case f.short(key):
		most = max(most, f.shortHolders)
	case f.besideHolders > 0 && held >= f.besideHolders && f.busyBeside(key):
		most = f.besideHolders
	}
	switch {
	case most > 0 && held >= most:
		return false
	case held < troubledHolders:
		return true
	}
	return !f.inTrouble(key)
}

// inTrouble reports whether the endpoint is in trouble (f.troubled, when
// set); f.mu is held.
func (f *fair) inTrouble(key string) bool { return f.troubled != nil && f.troubled(key) }

// short reports whether the endpoint's line is not a burst (burstLine);
// f.mu is held.
func (f *fair) short(key string) bool { return len(f.lines[key]) <= f.burst }

// signalIfTakeable signals when a delivery waits that a taker may take;
// f.mu is held.
func (f *fair) signalIfTakeable() {
	if slices.ContainsFunc(f.turns, f.free) {
		f.signal()
	}
}

// signal leaves a token in ready, unless one is there; f.mu is held.
func (f *fair) signal() {
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

// len is how many deliveries wait.
func (f *fair) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// busyWindow is how long an endpoint counts as being started after a
// delivery of it was last taken (othersBusy).
const busyWindow = time.Second

// othersBusy reports whether an endpoint other than key is being started:
// a delivery of it waits, or was taken within busyWindow.
func (f *fair) othersBusy(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.busyBeside(key)
}

// busyBeside is othersBusy; f.mu is held.
func (f *fair) busyBeside(key string) bool {
	if slices.ContainsFunc(f.turns, func(k string) bool { return k != key }) {
		return true
	}
	now := f.clock()
	for k, at := range f.takenAt {
		if k != key && now.Sub(at) <= busyWindow {
			return true
		}
	}
	return false
}

// taken records that a delivery of key was taken now, dropping, once per
// busyWindow, the endpoints taken longer ago than that, so that takenAt
// holds only the endpoints being started; f.mu is held.
func (f *fair) taken(key string) {
	now := f.clock()
	f.takenAt[key] = now
	if now.Sub(f.forgottenAt) <= busyWindow {
		return
	}
	f.forgottenAt = now
	for k, at := range f.takenAt {
		if now.Sub(at) > busyWindow {
			delete(f.takenAt, k)
		}
	}
}

func (f *fair) clock() time.Time {
	if f.now == nil {
		return time.Now()
	}
	return f.now()
}
