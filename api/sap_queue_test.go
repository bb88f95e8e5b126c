package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

func TestQueueModeQueuesAtOnce(t *testing.T) {
	t.Parallel()
	st, c := testenv.Store(t), testenv.Client(t)
	h := newSAPHarness(t, st, c)
	a := h.newAccount("queuer")
	h.setMode(a, "queue")
	subID := h.subscribe(a, "https://receiver.example/hook", "order.created", "sap", "")
	ds := h.publish(a, "evt-1", "order.created", `{"n":1}`)
	if len(ds) != 1 || ds[0].Status != policies.StatusQueued {
		t.Fatalf("deliveries %+v, want one queued", ds)
	}
	d, err := st.GetDelivery(t.Context(), a.ID, ds[0].ID)
	if err != nil || d.Status != policies.StatusQueued || !d.Started || d.Attempts != 0 {
		t.Fatalf("delivery row %+v (%v): want queued, no attempt", d, err)
	}
	// Not pushed: no workflow was ever started for it.
	_, err = c.DescribeWorkflowExecution(t.Context(), d.WorkflowID, "")
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("describe %s: %v, want not found", d.WorkflowID, err)
	}
	// Queue mode queues without deactivating the subscription.
	if sub, _ := st.GetSubscription(t.Context(), a.ID, subID); !sub.Active {
		t.Fatal("queue mode deactivated the subscription")
	}
	got := h.pull(a.Auth, "channel='webhook' and status='queued' and config.url='https://receiver.example/hook'")
	if len(got) != 1 || got[0].Event.ID != "evt-1" || string(got[0].Event.Data) != `{"n":1}` {
		t.Fatalf("pulled %+v", got)
	}
	// Back in retry mode, events are pushed (pending, not queued) again.
	h.setMode(a, "retry")
	res, err := st.Publish(t.Context(), store.Event{AccountID: a.ID, Type: "order.created"})
	if err != nil || len(res.Deliveries) != 1 || res.Deliveries[0].Status != "pending" {
		t.Fatalf("publish in retry mode: %+v %v", res.Deliveries, err)
	}
}

// queueFixture is one account with two subscriptions and deliveries of four
// events at known times: p0 pending (published in retry mode), then, in queue
// mode, e1 (created, A), e2 and e3 (paid, A and B).
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
	f.h.setMode(f.a, "queue")
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
