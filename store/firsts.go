package store

import (
	"slices"
	"sync"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/secrets"
)

// Bounds of a FirstAttempts.
const (
	// firstAttemptsBytes bounds the event bodies FirstAttempts holds; a
	// publish that finds no room hands nothing over.
	firstAttemptsBytes = 64 << 20
	// firstAttemptTTL is how long a target handed over waits to be taken
	// before it is dropped.
	firstAttemptTTL = 10 * time.Minute
	// firstAttemptOverhead is what an entry costs beside its event's body.
	firstAttemptOverhead = 1024
)

// FirstAttempts hands the first attempts of deliveries from publishing to
// the worker of the same process that makes them. A publish (Publish) of a
// delivery whose first attempt may go at once opens that attempt's row in
// its own statement, before any request as always, and keeps the row and
// what the attempt needs (its Target, as PostgreSQL would give it) here;
// the attempt, made by the worker that eager start gives the workflow task,
// takes both (BeginTarget) and sends its request with no statement before
// it.
//
// An entry not taken (the start was not eager, so the workflow's first task
// may go to another process: NotEager; or it waited longer than
// firstAttemptTTL) is dropped, and its row, whose request never went out,
// is remembered as unsent, for the workers' loop to delete (DropUnsent):
// the attempt, wherever it runs, begins as any other. One FirstAttempts is
// shared by the stores of a process's API and worker
// (Store.ShareFirstAttempts); the zero value is not usable
// (NewFirstAttempts).
type FirstAttempts struct {
	mu    sync.Mutex
	byID  map[string]firstAttempt
	byWF  map[string]string // workflow id → delivery id
	order []string          // delivery ids in the order they were put, for expiry
	bytes int               // reserved and held
	max   int
	ttl   time.Duration
	now   func() time.Time
	// unsent is where the rows of entries dropped go, shared with the
	// stores that share f.
	unsent *unsent
}

// firstAttempt is one first attempt handed over: its target, the row the
// publish opened (started at opened), and its workflow's id.
type firstAttempt struct {
	t      Target
	at     time.Time
	bytes  int
	row    int64
	opened time.Time
	wf     string
}

// NewFirstAttempts is an empty FirstAttempts.
func NewFirstAttempts() *FirstAttempts {
	return &FirstAttempts{byID: map[string]firstAttempt{}, byWF: map[string]string{}, max: firstAttemptsBytes,
		ttl: firstAttemptTTL, now: time.Now, unsent: &unsent{}}
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

// put holds fa, whose fa.bytes were reserved.
func (f *FirstAttempts) put(fa firstAttempt) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fa.at = f.now()
	f.byID[fa.t.DeliveryID] = fa
	f.byWF[fa.wf] = fa.t.DeliveryID
	f.order = append(f.order, fa.t.DeliveryID)
}

// take removes and returns the first attempt handed over for delivery id.
func (f *FirstAttempts) take(id string) (firstAttempt, bool) {
	if f == nil {
		return firstAttempt{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fa, ok := f.remove(id)
	f.expire()
	return fa, ok
}

// NotEager drops the first attempt of the delivery whose workflow id's
// start was not eager (or failed): its first workflow task may go to any
// worker, which opens a row of its own. The row the publish opened is
// remembered as unsent, unless it was taken already.
func (f *FirstAttempts) NotEager(workflowID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.byWF[workflowID]; ok {
		f.drop(id)
	}
}

// remove removes the entry of delivery id; f.mu is held.
func (f *FirstAttempts) remove(id string) (firstAttempt, bool) {
	fa, ok := f.byID[id]
	if ok {
		delete(f.byID, id)
		delete(f.byWF, fa.wf)
		f.bytes -= fa.bytes
	}
	return fa, ok
}

// drop removes the entry of delivery id, not taken, and remembers its row
// as unsent; f.mu is held.
func (f *FirstAttempts) drop(id string) {
	if fa, ok := f.remove(id); ok && fa.row != 0 {
		f.unsent.note([]string{id}, fa.opened)
	}
}

// expire drops the entries put longer than ttl ago; f.mu is held.
func (f *FirstAttempts) expire() { f.expireBefore(f.now().Add(-f.ttl)) }

// expireBefore drops the entries put before cutoff, remembering their rows
// as unsent, and forgets the ids at the front of the order that were
// taken; f.mu is held.
func (f *FirstAttempts) expireBefore(cutoff time.Time) {
	for len(f.order) > 0 {
		fa, ok := f.byID[f.order[0]]
		if ok && fa.at.After(cutoff) {
			return
		}
		f.drop(f.order[0])
		f.order = f.order[1:]
	}
}

// sweep expires entries outside a publish or an attempt: for the workers'
// loop (DropUnsent), so that a row is deleted in time even when neither
// comes, or, when all, every entry, for a worker that stopped and will take
// none (DropHandedOver). A nil f holds nothing.
func (f *FirstAttempts) sweep(all bool) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if all {
		f.expireBefore(f.now())
		return
	}
	f.expire()
}

// ShareFirstAttempts makes s hand the first attempts of the deliveries it
// publishes over through f, and take them there when it begins one: give
// the same f to the stores of a process's API and of the worker that
// eagerly starts its deliveries, and to no other, before they are used. The
// stores then share one unsent too: the rows this process opened and sent
// nothing for, whichever store opened them.
func (s *Store) ShareFirstAttempts(f *FirstAttempts) { s.firsts, s.unsent = f, f.unsent }

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

// subscriptionTarget is the part of a Target that a delivery's
// subscription sub and its endpoint (in state, with limits l) give, with
// sub's previous signing secret if it signs now (previousInForceSQL); not
// ok when sub's secrets do not open with keys.
func subscriptionTarget(keys *secrets.Ring, sub Subscription, state string, l Limits, previousInForce bool) (Target, bool) {
	ss := sub.sealedSecrets
	if !previousInForce {
		ss.SealedPrevious, ss.PreviousKeyID = "", ""
	}
	current, previous, err := openSecrets(keys, sub.ID, ss)
	if err != nil {
		return Target{}, false
	}
	return Target{
		SubscriptionID: sub.ID, AccountID: sub.AccountID, SubscriptionName: sub.Name, Options: sub.Options,
		URL: sub.URL, EndpointID: sub.EndpointID, EndpointState: state, sealedSecrets: ss, SigningSecret: current,
		PreviousSigningSecret: previous, Limits: l, Status: policies.StatusPending,
	}, true
}

// reservation is the room a publish reserved: each bytes for every one of
// n targets.
type reservation struct{ each, n int }

// keepFirsts keeps the first attempts of ds that f has room for (all of
// them, or none), stamping when their rows open (opened), to be handed over
// once published; it clears them for a nil f.
func keepFirsts(f *FirstAttempts, ev Event, ds []Delivery) reservation {
	r := reservation{each: len(ev.Data) + len(ev.Fields.Extensions) + firstAttemptOverhead}
	for _, d := range ds {
		if d.first != nil {
			r.n++
		}
	}
	if r.n > 0 && f != nil && f.reserve(r.each*r.n) {
		at := f.now()
		for _, d := range ds {
			if d.first != nil {
				d.first.opened = at
			}
		}
		return r
	}
	for i := range ds {
		ds[i].first = nil
	}
	return reservation{}
}

// anyFirst reports whether any of ds is to be handed over.
func anyFirst(ds []Delivery) bool {
	return slices.ContainsFunc(ds, func(d Delivery) bool { return d.first != nil })
}

// handOver holds the first attempts of the deliveries a publish stored
// (res), once it succeeded (err nil), and gives back the room r held for the
// rest. When it failed, the rows it may have opened for ds all the same
// (the commit can succeed while its answer is lost) are unsent.
func (f *FirstAttempts) handOver(ds []Delivery, res PublishResult, r reservation, err error) {
	if r.n == 0 {
		return
	}
	if err != nil {
		for _, d := range ds {
			if d.first != nil {
				f.unsent.note([]string{d.ID}, d.first.opened)
			}
		}
		f.release(r.each * r.n)
		return
	}
	ev := res.Event
	for _, d := range res.Deliveries {
		if d.first == nil || r.n == 0 {
			continue
		}
		fa := *d.first
		t := &fa.t
		t.DeliveryID, t.CreatedAt = d.ID, d.CreatedAt
		t.EventID, t.ExternalID, t.EventType, t.Subject, t.Data = ev.ID, ev.ExternalID, ev.Type, ev.Subject, ev.Data
		t.OccurredAt, t.DataVersion, t.Source = ev.OccurredAt, ev.Fields.DataVersion, ev.Fields.Source
		t.DataContentType, t.Extensions = ev.Fields.DataContentType, ev.Fields.Extensions
		fa.bytes, fa.wf = r.each, d.WorkflowID
		f.put(fa)
		r.n--
	}
	f.release(r.each * r.n)
}

// HandOver gives up the first attempt of delivery id in this process: the
// row a publish opened for it, if any, is remembered as unsent (its request
// never went out) and deleted by the attempt's next open, wherever that
// runs (activities.Shares).
func (s *Store) HandOver(id string) {
	if fa, ok := s.firsts.take(id); ok && fa.row != 0 {
		s.unsent.note([]string{id}, fa.opened)
	}
}
