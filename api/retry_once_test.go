package api

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// TestRetryOneInFlight: ten concurrent retries of one finished delivery make
// one fresh delivery; the others are a 409 while it is in flight (issue 10).
func TestRetryOneInFlight(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/h", EventTypes: []string{"r"},
		Policy: policies.NameWorkfront, Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	res, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "r", Data: store.RawJSON(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Deliveries[0]
	if _, err := st.FinishDelivery(ctx, store.Finish{DeliveryID: d.ID, Status: policies.StatusDropped}); err != nil {
		t.Fatal(err)
	}
	codes := make([]int, 10)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() { codes[i], _ = call(t, e, http.MethodPost, "/v1/deliveries/"+d.ID+"/retry", "") })
	}
	wg.Wait()
	accepted, conflicts := 0, 0
	for _, code := range codes {
		switch code {
		case http.StatusAccepted:
			accepted++
		case http.StatusConflict:
			conflicts++
		}
	}
	var fresh int
	if err := st.DB().Get(&fresh, `SELECT count(*) FROM deliveries WHERE previous_id = $1`, d.ID); err != nil {
		t.Fatal(err)
	}
	if accepted != 1 || conflicts != 9 || fresh != 1 {
		t.Fatalf("codes %v: %d accepted, %d conflicts, %d fresh deliveries; want 1, 9, 1", codes, accepted, conflicts, fresh)
	}
}
