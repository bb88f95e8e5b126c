package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/where"
)

const day = 24 * time.Hour

// retentionEnv builds rows for the retention tests and ages them.
type retentionEnv struct {
	t   *testing.T
	ctx context.Context
	st  *store.Store
}

func newRetentionEnv(t *testing.T) retentionEnv {
	t.Parallel()
	return retentionEnv{t: t, ctx: context.Background(), st: testenv.Store(t)}
}

// subscribe makes an active (or inactive: its deliveries are queued)
// workfront subscription to event type typ.
func (e retentionEnv) subscribe(name, typ string, active bool) store.Subscription {
	e.t.Helper()
	sub := store.Subscription{AccountID: store.DefaultAccount, Name: &name, URL: "http://127.0.0.1:1/" + name,
		EventTypes: []string{typ}, Policy: "workfront", Active: active}
	if err := e.st.CreateSubscription(e.ctx, &sub); err != nil {
		e.t.Fatal(err)
	}
	return sub
}

// publish stores an event of type typ created age ago and returns its
// deliveries.
func (e retentionEnv) publish(id, typ string, age time.Duration) (string, []store.Delivery) {
	e.t.Helper()
	res, err := e.st.Publish(e.ctx, store.Event{AccountID: store.DefaultAccount, ExternalID: id, Type: typ})
	if err != nil {
		e.t.Fatal(err)
	}
	e.exec(`UPDATE events SET created_at = now() - $2 * interval '1 second' WHERE id = $1`, res.Event.ID, age)
	return res.Event.ID, res.Deliveries
}

// attempt records one completed attempt of d, or an open one.
func (e retentionEnv) attempt(d store.Delivery, n int, complete bool) {
	e.t.Helper()
	now := time.Now()
	ids, err := e.st.BeginAttempts(e.ctx, []store.Attempt{{DeliveryID: d.ID, Attempt: n, ScheduledAt: now, StartedAt: now}})
	if err != nil {
		e.t.Fatal(err)
	}
	if !complete {
		return
	}
	if _, err := e.st.CompleteAttempts(e.ctx, d.EndpointID, ids, store.Attempt{StartedAt: now, StatusCode: 500}, ""); err != nil {
		e.t.Fatal(err)
	}
}

// finish ends d with status and dates its ending (and every change) age ago.
func (e retentionEnv) finish(d store.Delivery, status policies.Status, age time.Duration) {
	e.t.Helper()
	if _, err := e.st.FinishDelivery(e.ctx, store.Finish{DeliveryID: d.ID, Status: status, Reason: "test"}); err != nil {
		e.t.Fatal(err)
	}
	e.age(d.ID, age)
}

// deadLetter dead-letters d and dates it, and its dead letter, age ago.
func (e retentionEnv) deadLetter(d store.Delivery, age time.Duration) {
	e.t.Helper()
	e.finish(d, policies.StatusDeadLettered, age)
	e.exec(`UPDATE dead_letters SET created_at = now() - $2 * interval '1 second' WHERE delivery_id = $1`, d.ID, age)
}

// inFlight puts d, with one attempt made, in status (retrying with a second
// attempt open, or waiting) and dates it age ago.
func (e retentionEnv) inFlight(d store.Delivery, status policies.Status, age time.Duration) {
	e.t.Helper()
	e.attempt(d, 0, true)
	var err error
	if status == policies.StatusWaiting {
		_, err = e.st.SetWaiting(e.ctx, d.ID)
	} else {
		e.attempt(d, 1, false)
		next := time.Now().Add(time.Hour)
		err = e.st.SetInFlight(e.ctx, d.ID, status, &next)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	e.age(d.ID, age)
}

// age dates d's creation, last change and ending (if it ended) age ago.
func (e retentionEnv) age(id string, age time.Duration) {
	e.t.Helper()
	e.exec(`UPDATE deliveries SET created_at = now() - $2 * interval '1 second', updated_at = now() - $2 * interval '1 second',
		finished_at = CASE WHEN finished_at IS NULL THEN NULL ELSE now() - $2 * interval '1 second' END
		WHERE id = $1`, id, age)
}

func (e retentionEnv) exec(q string, id string, age time.Duration) {
	e.t.Helper()
	if _, err := e.st.DB().ExecContext(e.ctx, q, id, age.Seconds()); err != nil {
		e.t.Fatal(err)
	}
}

// count is how many rows of table have column = id.
func (e retentionEnv) count(table, column, id string) int {
	e.t.Helper()
	var n int
	if err := e.st.DB().GetContext(e.ctx, &n, `SELECT count(*) FROM `+table+` WHERE `+column+` = $1`, id); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// want checks that the event, the deliveries (with their attempts) and
// the dead letters of ids are all there (kept) or all gone.
func (e retentionEnv) want(kept bool, event string, deliveries ...string) {
	e.t.Helper()
	check := func(what string, n int) {
		if (n > 0) != kept {
			e.t.Errorf("%s: %d rows, want kept=%v", what, n, kept)
		}
	}
	if event != "" {
		check("event "+event, e.count("events", "id", event))
	}
	for _, id := range deliveries {
		check("delivery "+id, e.count("deliveries", "id", id))
		check("attempts of "+id, e.count("attempts", "delivery_id", id))
	}
}

// prune runs retention with 30 days for what finished and 90 for dead
// letters, two rows per statement so that every loop goes round.
func (e retentionEnv) prune() store.Pruned {
	e.t.Helper()
	now := time.Now()
	p, err := e.st.Prune(e.ctx, store.Retention{Finished: now.Add(-30 * day), DeadLetters: now.Add(-90 * day), Batch: 2})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// TestPruneKeepsWhatIsUnderWay: deliveries older than the retention that
// are in flight (retrying with an open attempt, pending unstarted, waiting),
// or queued for pulling (at publication, or once SAP retries ran out), stay, with their attempts and events; so do those
// that ended recently, and the events they belong to, however old. Only
// the old delivered one goes, with its attempts and its event.
func TestPruneKeepsWhatIsUnderWay(t *testing.T) {
	e := newRetentionEnv(t)
	e.subscribe("live", "t", true)
	e.subscribe("paused", "q", false)
	oldEvent, old := e.publish("old", "t", 40*day)
	e.attempt(old[0], 0, true)
	e.attempt(old[0], 1, true)
	e.finish(old[0], policies.StatusDelivered, 35*day)
	recentEvent, recent := e.publish("recent", "t", 40*day)
	e.attempt(recent[0], 0, true)
	e.finish(recent[0], policies.StatusDelivered, day)
	retryingEvent, retrying := e.publish("retrying", "t", 40*day)
	e.inFlight(retrying[0], policies.StatusRetrying, 40*day)
	pendingEvent, pending := e.publish("pending", "t", 40*day)
	e.age(pending[0].ID, 40*day)
	waitingEvent, waiting := e.publish("waiting", "t", 40*day)
	e.inFlight(waiting[0], policies.StatusWaiting, 40*day)
	queuedEvent, queued := e.publish("queued", "q", 40*day)
	if queued[0].Status != policies.StatusQueued {
		t.Fatalf("delivery to an inactive subscription is %s, want queued", queued[0].Status)
	}
	e.age(queued[0].ID, 40*day)
	exhaustedEvent, exhausted := e.publish("exhausted", "t", 40*day)
	e.attempt(exhausted[0], 0, true)
	e.finish(exhausted[0], policies.StatusQueued, 40*day)

	if p := e.prune(); p != (store.Pruned{Deliveries: 1, Attempts: 2, Events: 1}) {
		t.Fatalf("pruned %+v, want the old delivery, its 2 attempts and its event", p)
	}
	e.want(false, oldEvent, old[0].ID)
	e.want(true, recentEvent, recent[0].ID)
	e.want(true, retryingEvent, retrying[0].ID)
	e.want(true, pendingEvent)
	e.want(true, waitingEvent, waiting[0].ID)
	e.want(true, queuedEvent)
	e.want(true, exhaustedEvent, exhausted[0].ID)
	for _, d := range []store.Delivery{pending[0], queued[0]} {
		if e.count("deliveries", "id", d.ID) != 1 {
			t.Errorf("delivery %s (%s) was pruned", d.ID, d.Status)
		}
	}
	if p := e.prune(); p != (store.Pruned{}) {
		t.Fatalf("a second run pruned %+v", p)
	}
}

// TestPruneDeadLettersByTheirOwnRetention: a dead letter younger than its
// retention (90 days) keeps its delivery and event, though they are older
// than the retention of what finished (30 days); an older one goes, and its
// delivery and event with it. A dead letter past its retention whose
// redrive is still in flight goes, but the delivery it redrove stays with
// the redrive, and so does their event.
func TestPruneDeadLettersByTheirOwnRetention(t *testing.T) {
	e := newRetentionEnv(t)
	e.subscribe("dl", "t", true)
	keptEvent, kept := e.publish("kept", "t", 60*day)
	e.attempt(kept[0], 0, true)
	e.deadLetter(kept[0], 60*day)
	goneEvent, gone := e.publish("gone", "t", 100*day)
	e.attempt(gone[0], 0, true)
	e.deadLetter(gone[0], 100*day)
	redrivenEvent, redriven := e.publish("redriven", "t", 100*day)
	e.deadLetter(redriven[0], 100*day)
	prev, err := e.st.GetDelivery(e.ctx, store.DefaultAccount, redriven[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	redrive, err := e.st.FollowUp(e.ctx, prev, true)
	if err != nil {
		t.Fatal(err)
	}
	e.age(redrive.ID, 40*day)

	if p := e.prune(); p != (store.Pruned{DeadLetters: 2, Deliveries: 1, Attempts: 1, Events: 1}) {
		t.Fatalf("pruned %+v, want 2 dead letters, 1 delivery, 1 attempt, 1 event", p)
	}
	e.want(true, keptEvent, kept[0].ID)
	if e.count("dead_letters", "delivery_id", kept[0].ID) != 1 {
		t.Error("the 60-day-old dead letter was pruned")
	}
	e.want(false, goneEvent, gone[0].ID)
	e.want(true, redrivenEvent)
	for _, id := range []string{redriven[0].ID, redrive.ID} {
		if e.count("deliveries", "id", id) != 1 {
			t.Errorf("delivery %s of the redrive in flight was pruned", id)
		}
	}
	if e.count("dead_letters", "delivery_id", redriven[0].ID) != 0 {
		t.Error("the 100-day-old dead letter of the redriven delivery was kept")
	}
}

// redelivered publishes an event to the inactive subscription "q", 50 days
// ago, redelivers its queued delivery, and dates the redelivery 45 days ago
// and the fresh delivery's ending 40 days ago. The two refer to each other.
func (e retentionEnv) redelivered() (event, queued, redelivery string) {
	e.t.Helper()
	event, ds := e.publish("redelivered", "q", 50*day)
	w, err := where.Parse("status = 'queued'")
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.st.Redeliver(e.ctx, store.DefaultAccount, w)
	if err != nil || len(res.Deliveries) != 1 {
		e.t.Fatalf("redeliver: %+v %v", res, err)
	}
	e.age(ds[0].ID, 45*day)
	e.finish(res.Deliveries[0], policies.StatusDelivered, 40*day)
	return event, ds[0].ID, res.Deliveries[0].ID
}

// TestPruneDeliveriesThatReferToOneAnother: a delivery and its retry, and a
// queued delivery and its redelivery (which refer to each other), go
// together once all of them ended long enough ago; one event's delivery to
// one subscription goes while its delivery to another is in flight, and the
// event stays for the latter. Events without deliveries go by their age.
func TestPruneDeliveriesThatReferToOneAnother(t *testing.T) {
	e := newRetentionEnv(t)
	e.subscribe("a", "t", true)
	e.subscribe("b", "t", true)
	e.subscribe("q", "q", false)
	retriedEvent, retried := e.publish("retried", "t", 50*day)
	e.finish(retried[0], policies.StatusDelivered, 50*day)
	e.finish(retried[1], policies.StatusDelivered, 50*day)
	prev, err := e.st.GetDelivery(e.ctx, store.DefaultAccount, retried[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	retry, err := e.st.FollowUp(e.ctx, prev, false)
	if err != nil {
		t.Fatal(err)
	}
	e.attempt(retry, 0, true)
	e.finish(retry, policies.StatusDelivered, 40*day)
	redeliveredEvent, queued, redelivery := e.redelivered()
	splitEvent, split := e.publish("split", "t", 50*day)
	e.finish(split[0], policies.StatusDelivered, 50*day)
	e.age(split[1].ID, 50*day)
	bareOld, _ := e.publish("bare-old", "none", 31*day)
	bareNew, _ := e.publish("bare-new", "none", 29*day)

	if p := e.prune(); p != (store.Pruned{Deliveries: 6, Attempts: 1, Events: 3}) {
		t.Fatalf("pruned %+v, want 6 deliveries, 1 attempt, 3 events", p)
	}
	e.want(false, retriedEvent, retried[0].ID, retried[1].ID, retry.ID)
	e.want(false, redeliveredEvent)
	for _, id := range []string{queued, redelivery, split[0].ID} {
		if e.count("deliveries", "id", id) != 0 {
			t.Errorf("delivery %s was kept", id)
		}
	}
	e.want(true, splitEvent)
	if e.count("deliveries", "id", split[1].ID) != 1 {
		t.Error("the pending delivery of the split event was pruned")
	}
	e.want(false, bareOld)
	e.want(true, bareNew)
}

// TestPruneNothingWithoutRetention: zero cutoffs ("keep forever") delete
// nothing, however old.
func TestPruneNothingWithoutRetention(t *testing.T) {
	e := newRetentionEnv(t)
	e.subscribe("s", "t", true)
	event, ds := e.publish("e", "t", 400*day)
	e.deadLetter(ds[0], 400*day)
	if p, err := e.st.Prune(e.ctx, store.Retention{}); err != nil || p != (store.Pruned{}) {
		t.Fatalf("pruned %+v (%v)", p, err)
	}
	if e.count("events", "id", event) != 1 || e.count("dead_letters", "delivery_id", ds[0].ID) != 1 {
		t.Fatal("rows went without a retention")
	}
}

// TestPruneBatches: an Event Grid batch goes with the last of its
// deliveries; one with a delivery still in flight stays, and so does that
// delivery.
func TestPruneBatches(t *testing.T) {
	e := newRetentionEnv(t)
	batching := eventgrid.Settings{Mode: eventgrid.ModeEdge, Validation: eventgrid.ValidationNone, MaxEventsPerBatch: 2}
	sub := putEG(t, e.st, "batching", "b", batching)
	claim := func(ids ...string) []store.Delivery {
		var ds []store.Delivery
		for _, id := range ids {
			d := publishType(t, e.st, id, "b")
			e.exec(`UPDATE events SET created_at = now() - $2 * interval '1 second' WHERE id = $1`, d.EventID, 40*day)
			ds = append(ds, d)
		}
		b, err := e.st.ClaimBatch(e.ctx, store.BatchClaim{SubscriptionID: sub.ID, MaxEvents: 2})
		if err != nil || len(b.DeliveryIDs) != 2 {
			t.Fatalf("claim: %+v %v", b, err)
		}
		return ds
	}
	done := claim("d1", "d2")
	open := claim("o1", "o2")
	for _, d := range append(done, open[0]) {
		e.finish(d, policies.StatusDelivered, 40*day)
	}
	e.age(open[1].ID, 40*day)
	if p := e.prune(); p != (store.Pruned{Deliveries: 3, Batches: 1, Events: 3}) {
		t.Fatalf("pruned %+v, want 3 deliveries, 1 batch, 3 events", p)
	}
	var batches int
	if err := e.st.DB().GetContext(e.ctx, &batches, `SELECT count(*) FROM eventgrid_batches`); err != nil || batches != 1 {
		t.Fatalf("%d batches left (%v), want the one in flight", batches, err)
	}
	if e.count("deliveries", "id", open[1].ID) != 1 || e.count("events", "id", open[1].EventID) != 1 {
		t.Fatal("the delivery in flight or its event was pruned")
	}
}
