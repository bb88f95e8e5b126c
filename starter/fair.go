package starter

import "sync"

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
	// ready holds a token while deliveries may be waiting.
	ready chan struct{}
}

func newFair(size int) *fair {
	return &fair{lines: map[string][]queued{}, size: size, ready: make(chan struct{}, 1)}
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

// take removes up to max deliveries, one endpoint's first after another's;
// none when nothing waits.
func (f *fair) take(max int) []queued {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []queued
	for len(out) < max && len(f.turns) > 0 {
		key := f.turns[0]
		f.turns = f.turns[1:]
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
	if f.n > 0 {
		f.signal()
	}
	return out
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
