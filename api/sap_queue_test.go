package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestQueueModePushesFirst: issue 53, docs/policies.md#sap. An account in
// queue mode, through the API with a real worker, Temporal and PostgreSQL:
// each event is pushed once; a receiver answering 200 gets it and the
// delivery ends delivered; one answering 500, or a code in the
// subscription's dead_letter_codes, gets exactly one request and the
// delivery ends queued at once, no retry, the subscription still active,
// and the event can be pulled.
func TestQueueModePushesFirst(t *testing.T) {
	t.Parallel()
	st, c := testenv.Store(t), testenv.Client(t)
	sapWorker(t, st, c)
	h := newSAPHarness(t, st, c)
	a := h.newAccount("queuer")
	h.setMode(a, "queue")
	ok, failing, gone := newCountingReceiver(t, http.StatusOK), newCountingReceiver(t, http.StatusInternalServerError),
		newCountingReceiver(t, http.StatusGone)
	subOK := h.subscribe(a, ok.URL+"/hook", "order.created", "sap", "")
	subFail := h.subscribe(a, failing.URL+"/hook", "order.created", "sap", "")
	subGone := h.subscribe(a, gone.URL+"/hook", "order.created", "sap", `{"dead_letter_codes":[410]}`)
	ds := h.publish(a, "evt-1", "order.created", `{"n":1}`)
	if len(ds) != 3 {
		t.Fatalf("deliveries %+v, want three", ds)
	}
	want := map[string]policies.Status{subOK: policies.StatusDelivered, subFail: policies.StatusQueued,
		subGone: policies.StatusQueued}
	for _, d := range ds {
		if d.Status != policies.StatusPending {
			t.Fatalf("delivery %+v at publication, want pending (pushed first)", d)
		}
		sapWait(t, "delivery "+d.ID+" "+string(want[d.SubscriptionID]), func() bool {
			return h.apiDelivery(a, d.ID).Status == want[d.SubscriptionID]
		})
		if got := h.apiDelivery(a, d.ID); got.Attempts != 1 {
			t.Errorf("delivery to %s: %d attempts, want 1", d.SubscriptionID, got.Attempts)
		}
	}
	for _, r := range []*countingReceiver{ok, failing, gone} {
		if n := r.requests.Load(); n != 1 {
			t.Errorf("receiver answering %d got %d requests, want exactly 1", r.code, n)
		}
	}
	for _, id := range []string{subOK, subFail, subGone} {
		var sub store.Subscription
		h.do(http.MethodGet, "/v1/subscriptions/"+id, a.Auth, "").json(t, &sub)
		if !sub.Active {
			t.Errorf("subscription %s deactivated in queue mode", id)
		}
	}
	got := h.pull(a.Auth, "channel='webhook' and status='queued' and config.url='"+failing.URL+"/hook'")
	if len(got) != 1 || got[0].Event.ID != "evt-1" || string(got[0].Event.Data) != `{"n":1}` {
		t.Fatalf("pulled %+v", got)
	}
}

// countingReceiver answers every request with code and counts them.
type countingReceiver struct {
	*httptest.Server
	code     int
	requests atomic.Int64
}

func newCountingReceiver(t *testing.T, code int) *countingReceiver {
	r := &countingReceiver{code: code}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.requests.Add(1)
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

// apiDelivery is GET /v1/deliveries/{id} as the account.
func (h *sapHarness) apiDelivery(a sapAccount, id string) store.Delivery {
	h.t.Helper()
	r := h.do(http.MethodGet, "/v1/deliveries/"+id, a.Auth, "")
	if r.code != http.StatusOK {
		h.t.Fatalf("GET /v1/deliveries/%s: %d %s", id, r.code, r.body)
	}
	var d store.Delivery
	r.json(h.t, &d)
	return d
}

// pause pauses the account's subscription through the API: its events are
// then queued at once, without a push (docs/sap.md#modes).
func (h *sapHarness) pause(a sapAccount, subID string) {
	h.t.Helper()
	if r := h.do(http.MethodPatch, "/v1/subscriptions/"+subID, a.Auth, `{"active":false}`); r.code != http.StatusOK {
		h.t.Fatalf("PATCH /v1/subscriptions/%s active false: %d %s", subID, r.code, r.body)
	}
}

// queueFixture is one account with two subscriptions and deliveries of four
// events at known times: p0 pending (published while both subscriptions are
// active), then, with both paused, e1 (created, A), e2 and e3 (paid, A and B),
// queued.
type queueFixture struct {
	h          *sapHarness
	a          sapAccount
	subA, subB string
	times      []time.Time
}

const (
	urlA = "https://a.example/hook"
	urlB = "https://b.example/hook"
)

func newQueueFixture(t *testing.T) *queueFixture {
	t.Helper()
	f := &queueFixture{h: newSAPHarness(t, testenv.Store(t), nil)}
	f.a = f.h.newAccount("filters")
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for i := range 4 {
		f.times = append(f.times, base.Add(time.Duration(i)*time.Hour))
	}
	f.subA = f.sub(t, urlA, `["order.created","order.paid"]`)
	f.subB = f.sub(t, urlB, `["order.paid"]`)
	if _, err := f.h.st.Publish(t.Context(), store.Event{AccountID: f.a.ID, ExternalID: "p0", Type: "order.created",
		OccurredAt: f.times[0]}); err != nil {
		t.Fatal(err)
	}
	f.h.pause(f.a, f.subA)
	f.h.pause(f.a, f.subB)
	for i, typ := range []string{"order.created", "order.paid", "order.paid"} {
		r := f.h.do(http.MethodPost, "/v1/events", f.a.Auth, fmt.Sprintf(`{"id":"e%d","type":%q,"time":%q,"data":{"i":%d}}`,
			i+1, typ, f.times[i+1].Format(time.RFC3339), i+1))
		if r.code != http.StatusAccepted || strings.Contains(string(r.body), `"pending"`) {
			t.Fatalf("publish e%d: %d %s", i+1, r.code, r.body)
		}
	}
	return f
}

// sub creates a subscription of the fixture's account with these types.
func (f *queueFixture) sub(t *testing.T, u, types string) string {
	t.Helper()
	r := f.h.do(http.MethodPost, "/v1/subscriptions", f.a.Auth, `{"url":"`+u+`","event_types":`+types+`,"policy":"sap"}`)
	var sub store.Subscription
	r.json(t, &sub)
	if r.code != http.StatusCreated || sub.AccountID != f.a.ID {
		t.Fatalf("subscribe: %d %s", r.code, r.body)
	}
	return sub.ID
}

// keys names each delivery "event@a" or "event@b", sorted.
func (f *queueFixture) keys(ds []SAPDelivery) []string {
	out := []string{}
	for _, d := range ds {
		k := d.Event.ID + "@a"
		if d.Subscription.ID == f.subB {
			k = d.Event.ID + "@b"
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestPullFiltersByEachField(t *testing.T) {
	t.Parallel()
	f := newQueueFixture(t)
	all := f.h.pull(f.a.Auth, "channel='webhook'")
	ts := func(i int) string { return f.times[i].Format(time.RFC3339) }
	cases := []struct {
		where string
		want  []string
	}{
		{"channel='webhook'", []string{"e1@a", "e2@a", "e2@b", "e3@a", "e3@b", "p0@a"}},
		{"channel='email'", []string{}},
		{"status='queued'", []string{"e1@a", "e2@a", "e2@b", "e3@a", "e3@b"}},
		{"status='pending'", []string{"p0@a"}},
		{"status!='queued'", []string{"p0@a"}},
		{"channel='webhook' and status='queued' and config.url='" + urlB + "'", []string{"e2@b", "e3@b"}},
		{"config.url='https://other.example/hook'", []string{}},
		{"subscription.id='" + f.subA + "' and status='queued'", []string{"e1@a", "e2@a", "e3@a"}},
		{"subscription_id='" + f.subB + "'", []string{"e2@b", "e3@b"}},
		{"event.type='order.paid'", []string{"e2@a", "e2@b", "e3@a", "e3@b"}},
		{"event_type='order.created' and status in ('queued', 'pending')", []string{"e1@a", "p0@a"}},
		{"event.time<'" + ts(2) + "'", []string{"e1@a", "p0@a"}},
		{"event.time>'" + ts(2) + "'", []string{"e3@a", "e3@b"}},
		{"event.time>='" + ts(2) + "' and event.time<'" + ts(3) + "'", []string{"e2@a", "e2@b"}},
		{"event.time<='" + ts(0) + "'", []string{"p0@a"}},
		{"id='" + all[0].ID + "'", f.keys(all[:1])},
	}
	for _, c := range cases {
		if got := f.keys(f.h.pull(f.a.Auth, c.where)); !slices.Equal(got, c.want) {
			t.Errorf("where %s: got %v, want %v", c.where, got, c.want)
		}
	}
	// Oldest first.
	for i := 1; i < len(all); i++ {
		if all[i].CreatedDate.Before(all[i-1].CreatedDate) {
			t.Fatalf("not oldest first: %+v", all)
		}
	}
	if all[0].Event.ID != "p0" {
		t.Fatalf("first = %s, want p0", all[0].Event.ID)
	}
}

func TestPullDeliveryShape(t *testing.T) {
	t.Parallel()
	f := newQueueFixture(t)
	got := f.h.pull(f.a.Auth, "event.type='order.created' and status='queued'")
	if len(got) != 1 {
		t.Fatalf("pulled %+v", got)
	}
	d := got[0]
	if d.ID == "" || d.Status != "queued" || d.Channel != "webhook" || d.Config.URL != urlA ||
		d.Subscription.ID != f.subA || d.Event.ID != "e1" || d.Event.Type != "order.created" ||
		string(d.Event.Data) != `{"i":1}` || !d.Event.Time.Equal(f.times[1]) {
		t.Fatalf("delivery %+v", d)
	}
}

func TestPullPages(t *testing.T) {
	t.Parallel()
	f := newQueueFixture(t)
	want := deliveryIDs(f.h.pull(f.a.Auth, "channel='webhook'"))
	var got []string
	token, pages := "", 0
	for {
		extra := "pageSize=4"
		if token != "" {
			extra += "&nextPage=" + token
		}
		r := f.h.do(http.MethodGet, queuePath("channel='webhook'", extra), f.a.Auth, "")
		var page []SAPDelivery
		r.json(t, &page)
		got, pages = append(got, deliveryIDs(page)...), pages+1
		if token = r.header.Get(HeaderNextPage); token == "" || pages > 5 {
			break
		}
	}
	if pages != 2 || !slices.Equal(got, want) {
		t.Fatalf("%d pages %v, want 2 pages %v", pages, got, want)
	}
}

func TestPullBadInput(t *testing.T) {
	t.Parallel()
	f := newQueueFixture(t)
	cases := []struct{ path, field, says string }{
		{"/notifications/subscriptions/deliveries", "where", "required"},
		{queuePath("", ""), "where", "required"},
		{queuePath("foo='x'", ""), "where", "foo\\\" at character 1"},
		{queuePath("status='queued' and event.time<'yesterday'", ""), "where", "at character"},
		{queuePath("status<'queued'", ""), "where", "at character"},
		{queuePath("status='queued'", "pageSize=0"), "pageSize", "pageSize"},
		{queuePath("status='queued'", "pageSize=1001"), "pageSize", "pageSize"},
		{queuePath("status='queued'", "nextPage=not-a-token"), "nextPage", "nextPage"},
	}
	for _, c := range cases {
		r := f.h.do(http.MethodGet, c.path, f.a.Auth, "")
		if r.code != http.StatusBadRequest || r.errorField(t) != c.field || !strings.Contains(string(r.body), c.says) {
			t.Errorf("GET %s: %d %s, want 400 on %s saying %q", c.path, r.code, r.body, c.field, c.says)
		}
	}
}
