package activities_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// firstAttempt is the local first attempt of d as the workflow asks for it.
func firstAttempt(d store.Delivery) workflows.DeliverInput {
	return workflows.DeliverInput{DeliveryID: d.ID, ScheduledAt: time.Now(), Timeout: 5 * time.Second,
		MayThrottle: true, FinishDelivered: true}
}

// TestFirstSuccessRecordedLater: a first attempt that succeeds tells its
// workflow before its outcome is written (its row was written before the
// request, and stays open until then): with the endpoint's counter row
// locked by another transaction, Deliver still returns, Finished; once the
// lock goes, the outcome and the delivery's end are written.
func TestFirstSuccessRecordedLater(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(201) }))
	defer rcv.Close()
	d := deliveryTo(t, st, rcv.URL)
	tx, err := st.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM endpoints WHERE id = $1 FOR UPDATE`, d.EndpointID); err != nil {
		t.Fatal(err)
	}
	got := make(chan workflows.DeliverResult, 1)
	go func() {
		res, err := acts.Deliver(ctx, firstAttempt(d))
		if err != nil {
			t.Error(err)
		}
		got <- res
	}()
	select {
	case res := <-got:
		if !res.Success || !res.Finished || res.StatusCode != 201 {
			t.Errorf("result %+v, want a success the activity finishes", res)
		}
	case <-time.After(time.Minute):
		t.Fatal("Deliver waited for the outcome to be written")
	}
	if as, err := st.Attempts(ctx, d.ID); err != nil || len(as) != 1 || as[0].ErrorKind != store.KindInFlight {
		t.Errorf("while the outcome waits: %+v %v, want one open row", as, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	acts.Later.Wait()
	as, err := st.Attempts(ctx, d.ID)
	if err != nil || len(as) != 1 || !as[0].Success || as[0].StatusCode != 201 || as[0].ErrorKind != "" {
		t.Errorf("after: %+v %v, want the success recorded", as, err)
	}
	if got, err := st.GetDelivery(ctx, store.DefaultAccount, d.ID); err != nil || got.Status != policies.StatusDelivered {
		t.Errorf("delivery %s %v, want delivered", got.Status, err)
	}
}

// TestFailureRecordedBeforeReturn: a failed first attempt (and any attempt
// without Later) is written before the workflow is told, with the
// endpoint's counters, which its health needs.
func TestFailureRecordedBeforeReturn(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
	defer failing.Close()
	ok := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer ok.Close()
	for _, c := range []struct {
		name  string
		url   string
		later bool
	}{{"failure", failing.URL, true}, {"success without Later", ok.URL, false}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, st := context.Background(), testenv.Store(t)
			acts := activities.New(st, testenv.Logger(), testenv.Egress())
			if !c.later {
				acts.Later = nil
			}
			d := deliveryTo(t, st, c.url)
			res, err := acts.Deliver(ctx, firstAttempt(d))
			if err != nil || res.Counters.Attempts != 1 {
				t.Errorf("%+v %v, want the endpoint's counters after the attempt", res, err)
			}
			if as, err := st.Attempts(ctx, d.ID); err != nil || len(as) != 1 || as[0].ErrorKind == store.KindInFlight {
				t.Errorf("%+v %v, want the outcome written", as, err)
			}
		})
	}
}

// TestFirstSuccessesWrittenTogether: the first-attempt successes of many
// deliveries to one endpoint, made while its counter row is locked, all
// tell their workflows; once the lock goes, every outcome is written and
// counted once, and every delivery is delivered.
func TestFirstSuccessesWrittenTogether(t *testing.T) {
	t.Parallel()
	const n = 40
	ctx, st := context.Background(), testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
	defer rcv.Close()
	first := deliveryTo(t, st, rcv.URL)
	ds := []store.Delivery{first}
	for len(ds) < n {
		pub, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: first.EventType, Data: store.RawJSON(`{}`)})
		if err != nil || len(pub.Deliveries) != 1 {
			t.Fatalf("publish: %+v %v", pub, err)
		}
		ds = append(ds, pub.Deliveries[0])
	}
	tx, err := st.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM endpoints WHERE id = $1 FOR UPDATE`, first.EndpointID); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, err := acts.Deliver(ctx, firstAttempt(d)); err != nil || !res.Finished {
				t.Errorf("%+v %v, want a success the activity finishes", res, err)
			}
		}()
	}
	wg.Wait()
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	acts.Later.Wait()
	ep, err := st.EndpointByID(ctx, first.EndpointID)
	if err != nil || ep.Attempts != n || ep.ConsecutiveFailures != 0 {
		t.Errorf("endpoint %+v (%v), want %d attempts", ep, err, n)
	}
	for _, d := range ds {
		got, err := st.GetDelivery(ctx, store.DefaultAccount, d.ID)
		if err != nil || got.Status != policies.StatusDelivered {
			t.Errorf("delivery %s: %s %v, want delivered", d.ID, got.Status, err)
		}
	}
}
