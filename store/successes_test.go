package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestCompleteSuccesses: the successes of three requests to one endpoint,
// written with one statement, are three attempts in its counters and its
// minute bucket, clear its consecutive failures and finish their
// deliveries as delivered; writing one of them again, as a retried batch
// would, neither writes nor counts it again, and a row already closed
// (cut off by a crash) is left as it is.
func TestCompleteSuccesses(t *testing.T) {
	t.Parallel()
	st, ctx := testenv.Store(t), context.Background()
	sub := subscribeType(t, st, "successes.test", "workfront")
	var ss []store.Success
	var ids []string
	for i := 0; i < 4; i++ {
		d := publishType(t, st, fmt.Sprintf("successes-%d", i), "successes.test")
		rows, err := st.BeginAttempts(ctx, []store.Attempt{{DeliveryID: d.ID, ScheduledAt: time.Now(), StartedAt: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
		ss = append(ss, store.Success{Row: rows[0], Attempt: store.Attempt{StartedAt: time.Now(), DurationMs: 2.5,
			StatusCode: 200 + i, ResponseBody: "ok", ResponseHeaders: store.RawJSON(`{"X-Seen":["1"]}`), Success: true}})
	}
	if _, err := st.CompleteAttempts(ctx, sub.EndpointID, []int64{ss[3].Row}, store.Attempt{StartedAt: time.Now(),
		StatusCode: 500, ErrorKind: "http_status"}, ""); err != nil {
		t.Fatal(err)
	}
	got, err := st.CompleteSuccesses(ctx, sub.EndpointID, ss)
	if err != nil || len(got) != 3 {
		t.Fatalf("first write: %d delivered (%v), want 3", len(got), err)
	}
	if again, err := st.CompleteSuccesses(ctx, sub.EndpointID, ss[:1]); err != nil || len(again) != 0 {
		t.Fatalf("again: %d delivered (%v), want none", len(again), err)
	}
	ep, err := st.EndpointByID(ctx, sub.EndpointID)
	if err != nil || ep.Attempts != 4 || ep.Failures != 1 || ep.ConsecutiveFailures != 0 || ep.LastSuccessAt == nil {
		t.Errorf("endpoint %+v (%v), want 4 attempts, 1 failure, none consecutive, a last success", ep, err)
	}
	var bucket int
	if err := st.DB().Get(&bucket, `SELECT sum(attempts) FROM endpoint_buckets WHERE endpoint_id = $1`, sub.EndpointID); err != nil || bucket != 4 {
		t.Errorf("buckets count %d attempts (%v), want 4", bucket, err)
	}
	for i, id := range ids {
		d, err := st.GetDelivery(ctx, store.DefaultAccount, id)
		as, aerr := st.Attempts(ctx, id)
		if err != nil || aerr != nil || len(as) != 1 {
			t.Fatalf("delivery %d: %+v %+v (%v %v)", i, d, as, err, aerr)
		}
		if i == 3 { // failed before: not finished, its failure kept
			if d.Status == policies.StatusDelivered || as[0].Success || as[0].StatusCode != 500 {
				t.Errorf("failed delivery: %s %+v", d.Status, as[0])
			}
			continue
		}
		if d.Status != policies.StatusDelivered || !as[0].Success || as[0].StatusCode != 200+i ||
			as[0].ErrorKind != "" || as[0].ResponseBody != "ok" || as[0].DurationMs != 2.5 {
			t.Errorf("delivery %d: %s %+v, want delivered with its outcome", i, d.Status, as[0])
		}
	}
}
