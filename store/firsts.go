package store

import (
	"slices"
	"sync"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
)

// Bounds of a FirstAttempts.
const (
	// firstAttemptsBytes bounds the event bodies FirstAttempts holds; a
	// publish that finds no room opens no first attempt.
	firstAttemptsBytes = 64 << 20
	// firstAttemptTTL is how long an opened first attempt waits to be
	// taken before it is dropped.
	firstAttemptTTL = 10 * time.Minute
	// firstAttemptOverhead is what an entry costs beside its event's body.
	firstAttemptOverhead = 1024
)

// FirstAttempts hands the first attempts that publishing opened to the
// worker of the same process that makes them. A publish (Publish) of a
// delivery whose first attempt may go at once writes its attempts row in
// the statement that stores the event, before its workflow starts; the
// attempt then finds its target and row here (BeginTarget) and makes no
// round trip to PostgreSQL before its request. The row is still written
// before the request, committed with the event.
//
// An entry not taken in time (its workflow's first task went to another
// process, or waited longer than firstAttemptTTL) is dropped: the attempt,
// wherever it runs, then begins as any other (BeginTarget), closing the
// row it cannot know was never sent as cut off, as after a crash. One
// FirstAttempts is shared by the stores of a process's API and worker
// (Store.ShareFirstAttempts); the zero value is not usable (NewFirstAttempts).
type FirstAttempts struct {
	mu    sync.Mutex
	byID  map[string]firstAttempt
	order []string // delivery ids in the order they were put, for expiry
	bytes int      // reserved and held
	max   int
	ttl   time.Duration
	now   func() time.Time
}

// firstAttempt is one opened first attempt.
type firstAttempt struct {
	t     Target
	row   int64
	at    time.Time
	bytes int
}

// NewFirstAttempts is an empty FirstAttempts.
func NewFirstAttempts() *FirstAttempts {
	return &FirstAttempts{byID: map[string]firstAttempt{}, max: firstAttemptsBytes, ttl: firstAttemptTTL, now: time.Now}
}

// reserve makes room for n bytes, false when there is none.
func (f *FirstAttempts) reserve(n int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expire()
	if f.bytes+n > f.max {
		return false
	}
	f.bytes += n
	return true
}

// release gives back n reserved bytes that were not put.
func (f *FirstAttempts) release(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bytes -= n
}

// put holds the opened first attempt row of t's delivery, whose n bytes were
// reserved.
func (f *FirstAttempts) put(t Target, row int64, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byID[t.DeliveryID] = firstAttempt{t: t, row: row, at: f.now(), bytes: n}
	f.order = append(f.order, t.DeliveryID)
}

// take removes and returns the opened first attempt of delivery id.
func (f *FirstAttempts) take(id string) (Target, int64, bool) {
	if f == nil {
		return Target{}, 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fa, ok := f.byID[id]
	if ok {
		delete(f.byID, id)
		f.bytes -= fa.bytes
	}
	f.expire()
	return fa.t, fa.row, ok
}

// expire drops the entries put longer than ttl ago, and forgets the ids at
// the front of the order that were taken.
func (f *FirstAttempts) expire() {
	cutoff := f.now().Add(-f.ttl)
	for len(f.order) > 0 {
		fa, ok := f.byID[f.order[0]]
		if ok && fa.at.After(cutoff) {
			return
		}
		if ok {
			delete(f.byID, f.order[0])
			f.bytes -= fa.bytes
		}
		f.order = f.order[1:]
	}
}

// Len is the number of opened first attempts waiting to be taken.
func (f *FirstAttempts) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.byID)
}

// ShareFirstAttempts makes s open the first attempts of the deliveries it
// publishes and hand them over through f, and take them there when it
// begins one: give the same f to the stores of a process's API and of the
// worker that eagerly starts its deliveries, and to no other.
func (s *Store) ShareFirstAttempts(f *FirstAttempts) { s.firsts = f }

// opensAtOnce reports whether the first attempt of a delivery to sub, whose
// endpoint is in state with limits l, goes out as soon as its workflow
// starts: a Delivery workflow (not queued, not ordered, not an Event Grid
// subscription awaiting its handshake or batching), to an endpoint that lets
// an attempt go (policies.MayAttempt) and has no limits to check.
func opensAtOnce(sub Subscription, queued bool, state string, l Limits) bool {
	if queued || sub.Ordered || l.Limited() || !policies.MayAttempt(state, false) {
		return false
	}
	eg := eventgrid.Of(sub.Options)
	return !eg.Awaiting() && !eg.Batching()
}

// mayBegin reports whether BeginTarget, asked for states and unlimitedOnly,
// would begin an attempt to t.
func mayBegin(t Target, states []string, unlimitedOnly bool) bool {
	return slices.Contains(states, t.EndpointState) && (!unlimitedOnly || !t.Limited())
}

// opened is a first attempt that publishing opens: its target, and its
// attempts row once inserted.
type opened struct {
	t   Target
	row int64
}

// subscriptionTarget is the part of a Target that a delivery's
// subscription sub and its endpoint (in state, with limits l) give; the
// previous signing secret is sub's while previousValid (by the database's
// clock).
func subscriptionTarget(sub Subscription, state string, l Limits, previousValid bool) Target {
	t := Target{
		SubscriptionID: sub.ID, AccountID: sub.AccountID, SubscriptionName: sub.Name, Options: sub.Options,
		URL: sub.URL, EndpointID: sub.EndpointID, EndpointState: state, SigningSecret: sub.SigningSecret,
		Limits: l, Status: policies.StatusPending,
	}
	if previousValid {
		t.PreviousSigningSecret = sub.PreviousSigningSecret
	}
	return t
}

// keepFirsts keeps the first attempts of ds that f has room for (all of
// them, or none), to be opened as they are inserted; it clears them for a
// nil f. It returns the bytes reserved.
func keepFirsts(f *FirstAttempts, ev Event, ds []Delivery) int {
	n := 0
	for _, d := range ds {
		if d.first != nil {
			n += len(ev.Data) + len(ev.Fields.Extensions) + firstAttemptOverhead
		}
	}
	if n > 0 && f != nil && f.reserve(n) {
		return n
	}
	for i := range ds {
		ds[i].first = nil
	}
	return 0
}

// openedRows gives the deliveries of ds whose first attempt was opened
// their rows: rows[i] is ids[i]'s.
func openedRows(ds []Delivery, ids []string, rows []int64) {
	for i := range ds {
		if ds[i].first == nil {
			continue
		}
		ds[i].Attempts = 1
		if j := slices.Index(ids, ds[i].ID); j >= 0 {
			ds[i].first.row = rows[j]
		}
	}
}

// handOver holds the first attempts that a publish opened, once it
// succeeded (err nil) and stored res, and gives back what reserved held for
// the rest.
func (f *FirstAttempts) handOver(res PublishResult, reserved int, err error) {
	if reserved == 0 {
		return
	}
	ev := res.Event
	for _, d := range res.Deliveries {
		if err != nil || d.first == nil || d.first.row == 0 {
			continue
		}
		t := d.first.t
		t.DeliveryID, t.CreatedAt = d.ID, d.CreatedAt
		t.EventID, t.ExternalID, t.EventType, t.Subject, t.Data = ev.ID, ev.ExternalID, ev.Type, ev.Subject, ev.Data
		t.OccurredAt, t.DataVersion, t.Source = ev.OccurredAt, ev.Fields.DataVersion, ev.Fields.Source
		t.DataContentType, t.Extensions = ev.Fields.DataContentType, ev.Fields.Extensions
		n := len(ev.Data) + len(ev.Fields.Extensions) + firstAttemptOverhead
		f.put(t, d.first.row, n)
		reserved -= n
	}
	f.release(reserved)
}
