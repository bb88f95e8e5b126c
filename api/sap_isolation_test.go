package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// twoQueuedAccounts makes accounts A and B in queue mode, each with one
// paused subscription to the same URL and one queued event.
func twoQueuedAccounts(t *testing.T, h *sapHarness) (a, b sapAccount, da, db store.Delivery) {
	t.Helper()
	a, b = h.newAccount("a"), h.newAccount("b")
	for _, acc := range []sapAccount{a, b} {
		h.setMode(acc, "queue")
		h.pause(acc, h.subscribe(acc, "https://receiver.example/hook", "order.created", "sap", ""))
	}
	pa := h.publish(a, "evt-a", "order.created", `{"owner":"a"}`)
	pb := h.publish(b, "evt-b", "order.created", `{"owner":"b"}`)
	if len(pa) != 1 || len(pb) != 1 || pa[0].Status != "queued" || pb[0].Status != "queued" {
		t.Fatalf("publish: %+v %+v", pa, pb)
	}
	return a, b, pa[0], pb[0]
}

func TestAccountsIsolated(t *testing.T) {
	t.Parallel()
	h := newSAPHarness(t, testenv.Store(t), nil)
	a, b, da, db := twoQueuedAccounts(t, h)
	wrongOrg := "User " + a.User + ", Organization " + b.Org
	unauthorized := []struct{ method, path, auth, body string }{
		{http.MethodGet, "/accounts/" + a.ID, b.Auth, ""},
		{http.MethodGet, "/accounts/" + a.ID, "", ""},
		{http.MethodGet, "/accounts/" + a.ID, wrongOrg, ""},
		{http.MethodGet, "/accounts/" + a.ID, "Bearer " + a.Org, ""},
		{http.MethodGet, "/accounts/" + store.DefaultAccount, "", ""},
		{http.MethodPatch, "/accounts/" + a.ID + "/settings", b.Auth, `{"mode":"retry"}`},
		{http.MethodPatch, "/accounts/" + a.ID + "/settings", "", `{"mode":"retry"}`},
		{http.MethodGet, queuePath("channel='webhook'", ""), "", ""},
		{http.MethodGet, queuePath("channel='webhook'", ""), wrongOrg, ""},
		{http.MethodPut, queuePath("channel='webhook'", ""), "", ""},
		{http.MethodGet, "/v1/subscriptions", wrongOrg, ""},
		{http.MethodPost, "/v1/events", "User x, Organization y", `{"type":"order.created"}`},
	}
	for _, c := range unauthorized {
		r := h.do(c.method, c.path, c.auth, c.body)
		if r.code != http.StatusUnauthorized || r.errorField(t) != "Authorization" {
			t.Errorf("%s %s with %q: %d %s, want 401", c.method, c.path, c.auth, r.code, r.body)
		}
	}
	if ac, _ := h.st.GetAccount(t.Context(), a.ID); ac.Mode != store.ModeQueue {
		t.Fatalf("A's mode changed to %q by B", ac.Mode)
	}
	// Each account pulls only its own deliveries.
	all := "channel='webhook' and status='queued' and config.url='https://receiver.example/hook'"
	if got := deliveryIDs(h.pull(a.Auth, all)); !slices.Equal(got, []string{da.ID}) {
		t.Errorf("A pulls %v, want [%s]", got, da.ID)
	}
	if got := h.pull(b.Auth, all); len(got) != 1 || got[0].ID != db.ID || string(got[0].Event.Data) != `{"owner":"b"}` {
		t.Errorf("B pulls %+v, want only %s", got, db.ID)
	}
	if got := h.pull(b.Auth, "id='"+da.ID+"'"); len(got) != 0 {
		t.Errorf("B pulls A's delivery by id: %+v", got)
	}
	// /v1 acts as the authenticated account, or the default one.
	notFound := []struct{ path, auth string }{
		{"/v1/events/evt-a", b.Auth}, {"/v1/deliveries/" + da.ID, b.Auth},
		{"/v1/subscriptions/" + da.SubscriptionID, b.Auth}, {"/v1/events/evt-a", ""},
	}
	for _, c := range notFound {
		if r := h.do(http.MethodGet, c.path, c.auth, ""); r.code != http.StatusNotFound {
			t.Errorf("GET %s: %d %s, want 404", c.path, r.code, r.body)
		}
	}
	if r := h.do(http.MethodGet, "/v1/events/evt-a", a.Auth, ""); r.code != http.StatusOK {
		t.Errorf("A's own event: %d %s", r.code, r.body)
	}
	for _, c := range []struct {
		auth, want string
		n          int
	}{{a.Auth, a.ID, 1}, {b.Auth, b.ID, 1}, {"", "", 0}} {
		var subs struct{ Subscriptions []store.Subscription }
		h.do(http.MethodGet, "/v1/subscriptions", c.auth, "").json(t, &subs)
		if len(subs.Subscriptions) != c.n || (c.n == 1 && subs.Subscriptions[0].AccountID != c.want) {
			t.Errorf("subscriptions with %q: %+v", c.auth, subs.Subscriptions)
		}
	}
}

// deliveryRows is every delivery's id and status, to check nothing changed.
func deliveryRows(t *testing.T, st *store.Store) []string {
	t.Helper()
	var rows []string
	if err := st.DB().Select(&rows, `SELECT id || ':' || status || ':' || started FROM deliveries ORDER BY id`); err != nil {
		t.Fatalf("deliveries table: %v", err)
	}
	return rows
}

func TestWhereInjectionIsRejected(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	h := newSAPHarness(t, st, nil)
	a, _, da, _ := twoQueuedAccounts(t, h)
	before := deliveryRows(t, st)
	bad := []string{
		"' or 1=1 --",
		"'; drop table deliveries; --",
		"status='queued' or 1=1 --",
		"status='queued'; drop table deliveries; --",
		"status='queued' -- and channel='webhook'",
		"status=queued",
		"status='queued' and 1=1",
		"config.url='x' union select * from accounts",
		"status='unterminated",
	}
	for _, w := range bad {
		for _, m := range []string{http.MethodGet, http.MethodPut} {
			r := h.do(m, queuePath(w, ""), a.Auth, "")
			if r.code != http.StatusBadRequest || r.errorField(t) != "where" || !strings.Contains(string(r.body), "at character") {
				t.Errorf("%s where=%q: %d %s, want 400 at a character", m, w, r.code, r.body)
			}
		}
	}
	// A quote inside a literal is data, bound as an argument: it matches nothing.
	for _, w := range []string{"status='queued'' or ''1''=''1'", "status='x''; drop table deliveries; --'"} {
		if got := h.pull(a.Auth, w); len(got) != 0 {
			t.Errorf("where=%q matched %+v", w, got)
		}
	}
	if after := deliveryRows(t, st); !slices.Equal(before, after) {
		t.Fatalf("deliveries changed:\n%v\n%v", before, after)
	}
	if got := deliveryIDs(h.pull(a.Auth, "status='queued'")); !slices.Equal(got, []string{da.ID}) {
		t.Fatalf("after the attempts A pulls %v", got)
	}
}
