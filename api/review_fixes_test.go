package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/where"
)

// publishOne stores an event of type typ for the default account (no
// workflow is started) and returns its deliveries.
func publishOne(t *testing.T, st *store.Store, id, typ string) []store.Delivery {
	t.Helper()
	res, err := st.Publish(t.Context(), store.Event{AccountID: store.DefaultAccount, ExternalID: id,
		Type: typ, Data: store.RawJSON(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	return res.Deliveries
}

// TestTargetFollowsSubscriptionURL: after a PUT changes an Event Grid
// subscription's URL, a delivery made before it is gated and counted against
// the endpoint of the URL it now posts to, not the old one.
func TestTargetFollowsSubscriptionURL(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := testAPI(t, st, nil)
	const path = "/eventgrid/subscriptions/moves"
	if code, body := call(t, e, http.MethodPut, path, egSub("https://old.example/hook", "")); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, body)
	}
	old, err := st.GetSubscriptionByName(t.Context(), store.DefaultAccount, "moves")
	if err != nil {
		t.Fatal(err)
	}
	ds := publishOne(t, st, "moves-1", "order.created")
	if len(ds) != 1 || ds[0].EndpointID != old.EndpointID {
		t.Fatalf("deliveries: %+v", ds)
	}
	if code, body := call(t, e, http.MethodPut, path, egSub("https://new.example/hook", "")); code != http.StatusOK {
		t.Fatalf("replace: %d %v", code, body)
	}
	moved, err := st.GetSubscriptionByName(t.Context(), store.DefaultAccount, "moves")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := st.Target(t.Context(), ds[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if moved.EndpointID == old.EndpointID || tg.URL != "https://new.example/hook" || tg.EndpointID != moved.EndpointID {
		t.Fatalf("target: url %s endpoint %s, want the new endpoint %s (old %s)", tg.URL, tg.EndpointID,
			moved.EndpointID, old.EndpointID)
	}
}

// TestRedriveOnceAndQueuedRetryRefused: a dead letter is redriven once; a
// second redrive is a 409 that creates nothing. A queued (SAP) delivery
// cannot be retried (it stays pullable); the 409 names the SAP redeliver.
func TestRedriveOnceAndQueuedRetryRefused(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	c := testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	rcv := newReceiver(t)
	_, sub := call(t, e, http.MethodPost, "/v1/subscriptions", mustJSON(t, map[string]any{
		"url": rcv.URL, "event_types": []string{"once.test"}}))
	ds := publishOne(t, st, "once-1", "once.test")
	fin, err := st.FinishDelivery(t.Context(), store.Finish{DeliveryID: ds[0].ID, Status: policies.StatusDeadLettered,
		Reason: "test", LastStatus: 500})
	dlID := fin.DeadLetterID
	if err != nil || dlID == "" {
		t.Fatalf("dead letter: %q %v", dlID, err)
	}
	code, fresh := call(t, e, http.MethodPost, "/v1/dead-letters/"+dlID+"/redrive", "")
	if code != http.StatusAccepted {
		t.Fatalf("first redrive: %d %v", code, fresh)
	}
	waitDelivered(t, e, fresh["id"].(string))
	code, body := call(t, e, http.MethodPost, "/v1/dead-letters/"+dlID+"/redrive", "")
	if code != http.StatusConflict || jpath(body, "error", "code") != "conflict" {
		t.Fatalf("second redrive: %d %v, want 409 conflict", code, body)
	}
	_, dl := call(t, e, http.MethodGet, "/v1/dead-letters/"+dlID, "")
	if n := rowCount(t, st, "deliveries"); n != 2 || dl["redrive_delivery_id"] != fresh["id"] {
		t.Fatalf("after two redrives: %d deliveries, dead letter %v", n, dl)
	}

	if _, err := st.DB().Exec(`UPDATE subscriptions SET active = false WHERE id = $1`, sub["id"]); err != nil {
		t.Fatal(err)
	}
	queued := publishOne(t, st, "once-2", "once.test")[0]
	if queued.Status != policies.StatusQueued {
		t.Fatalf("delivery to an inactive subscription: %s", queued.Status)
	}
	code, body = call(t, e, http.MethodPost, "/v1/deliveries/"+queued.ID+"/retry", "")
	msg, _ := jpath(body, "error", "message").(string)
	if code != http.StatusConflict || !strings.Contains(msg, "PUT /notifications/subscriptions/deliveries?where=") {
		t.Fatalf("retry of a queued delivery: %d %v", code, body)
	}
	if n := rowCount(t, st, "deliveries"); n != 3 {
		t.Fatalf("retry of a queued delivery created one: %d deliveries", n)
	}
}

// TestReadyzHidesErrors: a failed check reads "unavailable", with no error
// text (addresses, driver messages) in the unauthenticated answer.
func TestReadyzHidesErrors(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	rec := httptest.NewRecorder()
	testAPI(t, st, c).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	body := rec.Body.String()
	want := `{"checks":{"postgres":"unavailable","temporal":"unavailable"},"ready":false}`
	if rec.Code != http.StatusServiceUnavailable || strings.TrimSpace(body) != want {
		t.Fatalf("readyz: %d %s, want 503 %s", rec.Code, body, want)
	}
}

// TestOversizedBodyOneCode: a body over the limit is 413 body_too_large,
// whether Echo's BodyLimit refuses it by its Content-Length or it is read
// (no Content-Length) and runs over.
func TestOversizedBodyOneCode(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), nil)
	big := `{"url":"https://a.example/hook","event_types":["` + strings.Repeat("x", MaxBodyBytes) + `"]}`
	for _, length := range []int64{int64(len(big)), -1} {
		req := httptest.NewRequest(http.MethodPost, "/v1/subscriptions", strings.NewReader(big))
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = length
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `"code":"body_too_large"`) {
			t.Errorf("Content-Length %d: %d %s, want 413 body_too_large", length, rec.Code, rec.Body.String())
		}
	}
}

// TestSigningSecretNotListed: the secret is in the creation's answer and in
// POST /v1/subscriptions/{id}/reveal-secret, not in GET or the list.
func TestSigningSecretNotListed(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), nil)
	_, sub := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url":"https://a.example/hook","event_types":["*"]}`)
	secret, _ := sub["signing_secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("creation: %v", sub)
	}
	if _, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+sub["id"].(string), ""); got["id"] != sub["id"] || got["signing_secret"] != nil {
		t.Fatalf("get: %v", got)
	}
	if _, got := call(t, e, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/reveal-secret", ""); got["signing_secret"] != secret {
		t.Fatalf("reveal: %v", got)
	}
	_, list := call(t, e, http.MethodGet, "/v1/subscriptions", "")
	subs, _ := list["subscriptions"].([]any)
	if len(subs) != 1 {
		t.Fatalf("list: %v", list)
	}
	if entry := subs[0].(map[string]any); entry["id"] != sub["id"] || entry["signing_secret"] != nil {
		t.Fatalf("list entry: %v", entry)
	}
}

// TestRedeliverCatchesRacingPublish: a publish that read the subscription
// inactive and commits its queued row while Redeliver runs does not leave a
// queued delivery on the subscription Redeliver reactivated. The publish is
// played by a transaction held open across Redeliver.
func TestRedeliverCatchesRacingPublish(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := testAPI(t, st, nil)
	_, sub := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url":"https://a.example/hook","event_types":["*"]}`)
	if _, err := st.DB().Exec(`UPDATE subscriptions SET active = false WHERE id = $1`, sub["id"]); err != nil {
		t.Fatal(err)
	}
	first := publishOne(t, st, "race-1", "race")[0]
	publish := st.DB().MustBegin()
	defer func() { _ = publish.Rollback() }()
	publish.MustExec(`INSERT INTO events (id, account_id, external_id, type) VALUES ('evt_race2', $1, 'race-2', 'race')`,
		store.DefaultAccount)
	publish.MustExec(`INSERT INTO deliveries (id, account_id, event_id, subscription_id, endpoint_id, event_type,
			policy, status, workflow_id, started)
		VALUES ('dlv_race2', $1, 'evt_race2', $2, $3, 'race', $4, 'queued', 'delivery/evt_race2/x', true)`,
		store.DefaultAccount, sub["id"], sub["endpoint_id"], sub["policy"])
	w, err := where.Parse("status = 'queued'")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		res store.Redelivery
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := st.Redeliver(t.Context(), store.DefaultAccount, w)
		done <- result{res, err}
	}()
	waitFor(t, "Redeliver to end or wait for the publish", time.Minute, func() bool {
		return len(done) == 1 || lockWaiters(t, st) > 0
	})
	if err := publish.Commit(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.res.Deliveries) != 2 || r.res.Reactivated != 1 {
		t.Fatalf("redeliver: %d deliveries, %d reactivated, want 2 and 1", len(r.res.Deliveries), r.res.Reactivated)
	}
	var queued int
	if err := st.DB().Get(&queued, `SELECT count(*) FROM deliveries WHERE status = 'queued'`); err != nil {
		t.Fatal(err)
	}
	if queued != 0 || first.Status != policies.StatusQueued {
		t.Fatalf("%d deliveries left queued on the reactivated subscription", queued)
	}
}

// lockWaiters counts the sessions of the test's database waiting for a lock.
func lockWaiters(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
		t.Fatal(err)
	}
	return n
}
