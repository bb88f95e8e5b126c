package activities

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Defaults of Shares (docs/endpoints.md#isolation).
const (
	// DefaultLocalPerEndpoint bounds the first attempts one endpoint makes
	// at once as local activities in one process.
	DefaultLocalPerEndpoint = 16
	// DefaultLocalShare is the part of the worker's local-activity slots
	// first attempts may hold at once, in percent: the rest stays free for
	// the bookkeeping of every delivery.
	DefaultLocalShare = 50
	// slowAfter makes an endpoint slow: a local first attempt open that
	// long. It is well below the 8 s after which the SDK must extend the
	// workflow task a local activity runs in, whose loss would run the
	// attempt again, and short: until an endpoint is found slow its
	// deliveries are started at full speed (starter.Queue.Troubled).
	slowAfter = time.Second
	// fullSlowAfter makes an endpoint slow sooner when every one of its
	// PerEndpoint local first attempts has had its request out that long:
	// a receiver that holds a burst's requests is found slow in a quarter
	// of a second rather than a second, and its deliveries paced sooner.
	// Only unanswered requests count: the time spent recording an answer,
	// long on a saturated machine, is hookrelay's, not the receiver's.
	fullSlowAfter = 250 * time.Millisecond
	// slowFor is how long a slow endpoint's first attempts are all handed
	// over, from the last slow one seen.
	slowFor = time.Minute
	// failingFor is how long an endpoint counts as failing after a local
	// first attempt of it failed, unless one succeeds meanwhile (Troubled).
	failingFor = 30 * time.Second
)

// Shares bounds the first attempts that run as local activities, inside the
// workflow task that started the delivery: at most PerEndpoint at once for
// one endpoint, and at most Total for all endpoints of the process; and
// none for an endpoint that is slow (a local first attempt of it was open
// for slowAfter, within slowFor). A first attempt past these bounds is
// handed over (DeliverResult.HandedOver): its workflow makes it as a regular
// activity on the deliveries queue, whose slots no workflow task, timer or
// bookkeeping step needs. So a receiver that holds its requests, or an
// endpoint's burst, holds at most its share of what every other endpoint's
// deliveries run on. A nil *Shares hands nothing over.
type Shares struct {
	// PerEndpoint and Total are the bounds; zero means no bound.
	PerEndpoint, Total int
	// now is the clock; nil is time.Now.
	now func() time.Time

	mu    sync.Mutex
	ends  map[string]*share
	total int
}

// share is one endpoint's local first attempts open, and until when the
// endpoint counts as slow, and as failing.
type share struct {
	open         []*slot
	slowUntil    time.Time
	failingUntil time.Time
}

// NewShares returns Shares bounding each endpoint to perEndpoint first
// attempts at once and the process to total.
func NewShares(perEndpoint, total int) *Shares {
	return &Shares{PerEndpoint: perEndpoint, Total: total}
}

func (s *Shares) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// slot is one local first attempt open: when its request went out and when
// it was answered, each zero until it happens. Slowness is the receiver's:
// the time before the request (waiting for PostgreSQL on a busy machine)
// and after its answer never makes an endpoint slow.
type slot struct {
	sent, answered time.Time
}

// out is how long sl's request has been out unanswered at now; zero
// before it goes out and once it is answered.
func (sl *slot) out(now time.Time) time.Duration {
	if sl.sent.IsZero() || !sl.answered.IsZero() {
		return 0
	}
	return now.Sub(sl.sent)
}

// took is how long sl's receiver took to answer; zero until it did.
func (sl *slot) took() time.Duration {
	if sl.sent.IsZero() || sl.answered.IsZero() {
		return 0
	}
	return sl.answered.Sub(sl.sent)
}

// take reserves a local first attempt for the endpoint, false when it must
// be handed over; a reservation is given back with done.
func (s *Shares) take(endpointID string) (sl *slot, ok bool) {
	if s == nil {
		return nil, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now, e := s.clock(), s.ends[endpointID]
	if e == nil {
		e = &share{}
	}
	full := (s.PerEndpoint > 0 && len(e.open) >= s.PerEndpoint) || (s.Total > 0 && s.total >= s.Total)
	if e.slow(now, s.PerEndpoint) || full {
		return nil, false
	}
	if s.ends == nil {
		s.ends = map[string]*share{}
	}
	sl = &slot{}
	e.open = append(e.open, sl)
	s.ends[endpointID] = e
	s.total++
	return sl, true
}

// sending records that sl's request goes out now, and returns what marks
// it answered (its answer read, or the request failed): the time after that
// is hookrelay's, and never makes the endpoint slow.
func (s *Shares) sending(sl *slot) (answered func()) {
	if s == nil || sl == nil {
		return func() {}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.sent = s.clock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		sl.answered = s.clock()
	}
}

// done gives back the endpoint's local first attempt sl; failed says
// whether its receiver answered with a failure (or none).
func (s *Shares) done(endpointID string, sl *slot, failed bool) {
	s.update(endpointID, func(e *share, now time.Time) {
		if sl.took() >= slowAfter {
			e.slowUntil = now.Add(slowFor)
		}
		e.failingUntil = time.Time{}
		if failed {
			e.failingUntil = now.Add(failingFor)
		}
		if i := slices.Index(e.open, sl); i >= 0 {
			e.open = slices.Delete(e.open, i, i+1)
			s.total--
		}
	})
}

// answered ends the endpoint's trouble in this process when an attempt
// made outside its share (a first attempt handed over, a retry, a probe,
// an ordered delivery's first attempt) succeeded, its receiver answering
// within slowAfter: the receiver answers again, so its deliveries need not
// wait out slowFor or failingFor at the troubled pace. Anything else
// changes nothing: only the share's first attempts make an endpoint slow
// or failing. A receiver slow only at times may so go in and out of
// trouble; while out, its share (PerEndpoint) bounds the local first
// attempts it can hold.
func (s *Shares) answered(endpointID string, success bool, took time.Duration) {
	if !success || took >= slowAfter {
		return
	}
	s.update(endpointID, func(e *share, _ time.Time) {
		e.slowUntil, e.failingUntil = time.Time{}, time.Time{}
	})
}

// update calls f with the endpoint's share and the time, under the lock,
// when it has one; then forgets the share if it holds nothing more (no
// first attempt open, neither slow nor failing).
func (s *Shares) update(endpointID string, f func(e *share, now time.Time)) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.ends[endpointID]
	if e == nil {
		return
	}
	now := s.clock()
	f(e, now)
	if len(e.open) == 0 && !now.Before(e.slowUntil) && !now.Before(e.failingUntil) {
		delete(s.ends, endpointID)
	}
}

// Troubled reports whether the endpoint is in trouble in this process: slow
// (a local first attempt of it open for slowAfter, now or within slowFor)
// or failing (its last local first attempt failed, within failingFor), and
// no attempt of it made outside its share has since been answered with a
// success within slowAfter (answered). The
// start queue then starts its deliveries more slowly
// (starter.Queue.Troubled): a receiver that holds its requests gains
// nothing from fast starts, and a failure storm's deliveries all go on to
// retry, so either would take Temporal's time from the endpoints that
// answer (docs/endpoints.md#isolation).
func (s *Shares) Troubled(endpointID string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.ends[endpointID]
	if e == nil {
		return false
	}
	now := s.clock()
	return e.slow(now, s.PerEndpoint) || now.Before(e.failingUntil)
}

// slow reports whether the endpoint is slow at now, first marking it so
// for slowFor when the request of an open first attempt went out slowAfter
// ago or more, or the requests of per of them (its whole share; zero: no
// share) fullSlowAfter ago or more.
func (e *share) slow(now time.Time, per int) bool {
	longest, held := time.Duration(0), 0 // held: out fullSlowAfter or more
	for _, sl := range e.open {
		out := sl.out(now)
		longest = max(longest, out)
		if out >= fullSlowAfter {
			held++
		}
	}
	if longest >= slowAfter || (per > 0 && held >= per) {
		e.slowUntil = now.Add(slowFor)
	}
	return now.Before(e.slowUntil)
}

// inFlight is how many local first attempts the endpoint has open now.
func (s *Shares) inFlight(endpointID string) int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.ends[endpointID]; e != nil {
		return len(e.open)
	}
	return 0
}

// sendingKey is the context key of the function post calls as its request
// goes out (withSending).
type sendingKey struct{}

// withSending returns ctx carrying f, which post calls as the request goes
// out (sendingNow), and whose result it calls once the answer is read or
// the request failed.
func withSending(ctx context.Context, f func() (answered func())) context.Context {
	return context.WithValue(ctx, sendingKey{}, f)
}

// sendingNow calls the function ctx carries from withSending, if any, and
// returns what post calls once answered (nothing without one).
func sendingNow(ctx context.Context) (answered func()) {
	if f, ok := ctx.Value(sendingKey{}).(func() func()); ok {
		return f()
	}
	return func() {}
}
