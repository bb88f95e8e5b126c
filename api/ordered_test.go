package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// fastRetries is a retry policy for tests whose failures are brief: a
// retry every 50 ms, 60 attempts, so a retry window of about 3 s. A test
// that holds deliveries longer (a disabled endpoint) needs slowRetries.
const fastRetries = `{"custom": {"kind": "fixed", "interval_seconds": 0.05}, "max_attempts": 60, "timeout_seconds": 5}`

// TestOrderedDelivery: issue 26. 1,000 events over 10 ordering keys to one
// ordered subscription whose receiver fails about 20% of requests at
// random: every event is delivered, the receiver's requests of each key
// come one at a time, each event's first only once the one before it was
// answered 200 (testenv.OrderedReceiver), and the attempts hookrelay
// recorded say the same: within a key, in publication order, no first
// attempt before the previous delivery finished. Real Temporal, PostgreSQL,
// worker and receiver.
func TestOrderedDelivery(t *testing.T) {
	t.Parallel()
	st, e, rcv := orderedAPI(t, 0.2)
	subID := subscribeOrdered(t, e, rcv.URL, "ord.test", fastRetries)
	const keys, perKey = 10, 100
	if err := publishKeys(e, "ord.test", keys, perKey); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, st, subID, keys*perKey, 6*time.Minute)
	if v := rcv.Violations(); len(v) > 0 {
		t.Fatalf("order violated:\n%s", strings.Join(v, "\n"))
	}
	for k := range keys {
		if got, _ := rcv.Delivered(fmt.Sprintf("k%d", k)); got != perKey {
			t.Errorf("key k%d: %d events answered 200, want %d", k, got, perKey)
		}
	}
	checkRecordedOrder(t, st, subID)
	if _, seqs := call(t, e, http.MethodGet, "/v1/subscriptions/"+subID+"/sequences", ""); len(seqs["sequences"].([]any)) != 0 {
		t.Errorf("sequences after all ended: %v", seqs)
	}
	t.Logf("%d requests for %d events", rcv.Requests(), keys*perKey)
}

// orderedAPI is the API on a fresh store with a real worker, and a
// testenv.OrderedReceiver answering 500 to failRate of its requests.
func orderedAPI(t *testing.T, failRate float64) (*store.Store, *echo.Echo, *testenv.OrderedReceiver) {
	t.Helper()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	return st, e, testenv.NewOrderedReceiver(t, failRate)
}

// subscribeOrdered makes an ordered subscription of url to typ with a
// custom retry policy, and returns its id.
func subscribeOrdered(t *testing.T, e *echo.Echo, url, typ, retry string) string {
	t.Helper()
	body := fmt.Sprintf(`{"url": %q, "event_types": [%q], "policy": "custom", "retry_policy": %s, "ordered": true}`,
		url, typ, retry)
	code, sub := call(t, e, http.MethodPost, "/v1/subscriptions", body)
	if code != http.StatusCreated || sub["ordered"] != true {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	return sub["id"].(string)
}

// publishKeys publishes perKey events of typ for each of keys ordering keys
// (k0, k1, …), the keys side by side, each key's one after the other, with
// data {"key", "n"} (testenv.OrderedEvent).
func publishKeys(e *echo.Echo, typ string, keys, perKey int) error {
	var wg sync.WaitGroup
	errs := make([]error, keys)
	for k := range keys {
		wg.Go(func() {
			key := fmt.Sprintf("k%d", k)
			for n := range perKey {
				if errs[k] = publishOrdered(e, typ, key, n); errs[k] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// publishOrdered publishes event n of key (any goroutine may call it).
func publishOrdered(e *echo.Echo, typ, key string, n int) error {
	body := fmt.Sprintf(`{"type": %q, "ordering_key": %q, "data": {"key": %q, "n": %d}}`, typ, key, key, n)
	req := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		return fmt.Errorf("publish %s/%d: %d %s", key, n, rec.Code, rec.Body)
	}
	return nil
}

// waitSettled waits until the subscription has n deliveries and every one
// of them has ended, at most limit.
func waitSettled(t *testing.T, st *store.Store, subID string, n int, limit time.Duration) {
	t.Helper()
	waitFor(t, "every delivery to end", limit, func() bool {
		var total, open int
		err := st.DB().QueryRow(`SELECT count(*), count(*) FILTER (WHERE status NOT IN `+
			policies.SQLList(policies.FinalStatuses)+`) FROM deliveries WHERE subscription_id = $1`, subID).
			Scan(&total, &open)
		return err == nil && total == n && open == 0
	})
}

// dumpSequences logs what hookrelay recorded of an ordered subscription's
// deliveries, key by key in sequence order, with their attempts: what a
// failed order check needs to be understood.
func dumpSequences(t *testing.T, st *store.Store, subID string) {
	t.Helper()
	var rows []string
	err := st.DB().Select(&rows, `SELECT format('key %s seq %s n %s: %s %s created %s finished %s; attempts %s',
			d.ordering_key, d.seq, e.data->>'n', d.status, COALESCE(d.final_reason, ''), d.created_at, d.finished_at,
			(SELECT string_agg(format('#%s %s (%s ms) code %s %s', a.attempt, a.started_at, a.duration_ms,
				a.status_code, COALESCE(a.error_kind, '')), '; ' ORDER BY a.started_at)
			 FROM attempts a WHERE a.delivery_id = d.id))
		FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.subscription_id = $1 ORDER BY d.ordering_key, d.seq`, subID)
	if err != nil {
		t.Logf("dump sequences: %v", err)
	}
	for _, r := range rows {
		t.Log(r)
	}
}

// checkRecordedOrder checks what hookrelay recorded of an ordered
// subscription's deliveries: all delivered; within each key, numbered in
// publication order (data.n); each one's first attempt started after the
// one before it finished.
func checkRecordedOrder(t *testing.T, st *store.Store, subID string) {
	t.Helper()
	var bad []string
	err := st.DB().Select(&bad, `WITH d AS (
			SELECT d.ordering_key, d.seq, d.status, d.finished_at, (e.data->>'n')::int AS n,
				(SELECT min(a.started_at) FROM attempts a WHERE a.delivery_id = d.id) AS first_attempt,
				lag(d.finished_at) OVER w AS prev_finished, lag((e.data->>'n')::int) OVER w AS prev_n
			FROM deliveries d JOIN events e ON e.id = d.event_id
			WHERE d.subscription_id = $1
			WINDOW w AS (PARTITION BY d.ordering_key ORDER BY d.seq))
		SELECT format('key %s seq %s n %s (after n %s): %s, first attempt %s, previous finished %s',
			ordering_key, seq, n, prev_n, status, first_attempt, prev_finished) FROM d
		WHERE status <> 'delivered' OR seq IS NULL OR n <> COALESCE(prev_n + 1, 0)
		   OR first_attempt IS NULL OR first_attempt < prev_finished`, subID)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Fatalf("%d deliveries out of order, first: %v", len(bad), bad[:min(len(bad), 5)])
	}
}

// TestOrderedSubscriptionAPI: "ordered" on creation, in reads and through
// PATCH; an event's ordering_key is bounded and printable, a 400 naming the
// field otherwise; an unordered subscription's sequences are none; a
// finished delivery cannot be skipped (409).
func TestOrderedSubscriptionAPI(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	code, sub := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "http://127.0.0.1:1/h", "event_types": ["o.api"]}`)
	if code != http.StatusCreated || sub["ordered"] != false {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	id := sub["id"].(string)
	if code, got := call(t, e, http.MethodPatch, "/v1/subscriptions/"+id, `{"ordered": true}`); code != http.StatusOK || got["ordered"] != true {
		t.Fatalf("PATCH ordered: %d %v", code, got)
	}
	if _, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+id, ""); got["ordered"] != true {
		t.Fatalf("read after PATCH: %v", got)
	}
	for _, bad := range []string{`"` + strings.Repeat("k", MaxOrderingKey+1) + `"`, `"a\tb"`, `"a\u0000b"`, `7`} {
		code, got := call(t, e, http.MethodPost, "/v1/events", `{"type": "o.api", "ordering_key": `+bad+`}`)
		if code != http.StatusBadRequest || jpath(got, "error", "field") != "ordering_key" {
			t.Errorf("ordering_key %.20s: %d %v, want a 400 naming ordering_key", bad, code, got)
		}
	}
	code, pub := call(t, e, http.MethodPost, "/v1/events", `{"id": "o-1", "type": "o.api", "ordering_key": "order-7"}`)
	ds, _ := pub["deliveries"].([]any)
	if code != http.StatusAccepted || len(ds) != 1 || jpath(ds[0], "ordering_key") != "order-7" || jpath(ds[0], "seq") == nil {
		t.Fatalf("publish: %d %v", code, pub)
	}
	if _, ev := call(t, e, http.MethodGet, "/v1/events/o-1", ""); jpath(ev, "event", "ordering_key") != "order-7" {
		t.Errorf("event read: %v", ev)
	}
	call(t, e, http.MethodPatch, "/v1/subscriptions/"+id, `{"ordered": false}`)
	if code, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+id+"/sequences", ""); code != http.StatusOK || got["ordered"] != false {
		t.Errorf("sequences of an unordered subscription: %d %v", code, got)
	}
	if code, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+id+"/sequences?limit=0", ""); code != http.StatusBadRequest {
		t.Errorf("sequences?limit=0: %d %v", code, got)
	}
	dID := jpath(ds[0], "id").(string)
	if _, err := st.FinishDelivery(context.Background(), store.Finish{DeliveryID: dID, Status: policies.StatusDropped}); err != nil {
		t.Fatal(err)
	}
	if code, got := call(t, e, http.MethodPost, "/v1/deliveries/"+dID+"/skip", ""); code != http.StatusConflict {
		t.Errorf("skip of a finished delivery: %d %v, want 409", code, got)
	}
}
