package activities_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// deliveryTo stores a subscription to url and an event, and returns the
// delivery made for it.
func deliveryTo(t *testing.T, st *store.Store, url string) store.Delivery {
	t.Helper()
	ctx := context.Background()
	typ := t.Name()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: url, EventTypes: []string{typ},
		Policy: "workfront", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	return publishOne(t, st)
}

// TestDeliverErrorKinds: each kind of failure is named and recorded with the
// attempt, against real servers that fail in each way.
func TestDeliverErrorKinds(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer slow.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tlsSrv.Close()
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Why", "moved on")
		w.WriteHeader(http.StatusGone)
		_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
	}))
	defer gone.Close()
	cases := []struct{ name, url, kind string }{
		{"timeout", slow.URL, workflows.KindTimeout},
		{"refused", "http://" + closedAddr(t), workflows.KindConnectionRefused},
		{"tls", tlsSrv.URL, workflows.KindTLS},
		{"dns", "http://no-such-host.invalid/", workflows.KindDNS},
		{"status", gone.URL, workflows.KindHTTPStatus},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := deliveryTo(t, st, tc.url)
			res, err := acts.Deliver(context.Background(), workflows.DeliverInput{
				DeliveryID: d.ID, ScheduledAt: time.Now(), Timeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if res.Success || res.ErrorKind != tc.kind {
				t.Fatalf("result %+v, want error kind %q", res, tc.kind)
			}
			as, err := st.Attempts(context.Background(), d.ID)
			if err != nil || len(as) != 1 || as[0].ErrorKind != tc.kind || as[0].Success {
				t.Fatalf("recorded %+v (%v)", as, err)
			}
			if tc.kind == workflows.KindHTTPStatus {
				assertResponseKept(t, as[0])
			}
		})
	}
}

// assertResponseKept: the status, the headers and a bounded prefix of the
// body are kept with the attempt.
func assertResponseKept(t *testing.T, a store.Attempt) {
	t.Helper()
	if a.StatusCode != http.StatusGone || len(a.ResponseBody) != 1024 || !strings.Contains(string(a.ResponseHeaders), "moved on") {
		t.Fatalf("attempt kept status %d, body %d bytes, headers %s", a.StatusCode, len(a.ResponseBody), a.ResponseHeaders)
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestDeliverRecordsEveryRequest: the same attempt executed twice (an
// activity run again after a crash) sends two requests: each has its row
// (try 0 and 1) and the endpoint counts both (issue 14).
func TestDeliverRecordsEveryRequest(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	var requests atomic.Int32
	ok := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	defer ok.Close()
	d := deliveryTo(t, st, ok.URL)
	in := workflows.DeliverInput{DeliveryID: d.ID, ScheduledAt: time.Now(), Timeout: time.Second}
	for i := 0; i < 2; i++ {
		res, err := acts.Deliver(context.Background(), in)
		if err != nil || !res.Success {
			t.Fatalf("deliver: %+v %v", res, err)
		}
	}
	var attempts, rows int
	if err := st.DB().Get(&attempts, `SELECT attempts FROM endpoints WHERE id = $1`, d.EndpointID); err != nil {
		t.Fatal(err)
	}
	if err := st.DB().Get(&rows, `SELECT count(*) FROM attempts WHERE delivery_id = $1`, d.ID); err != nil {
		t.Fatal(err)
	}
	if attempts != 2 || rows != 2 || requests.Load() != 2 {
		t.Fatalf("endpoint counted %d attempts, %d rows, %d requests; want 2 of each", attempts, rows, requests.Load())
	}
}

// TestDeliverSigned: every request carries the Standard Webhooks signature
// headers, and a receiver holding the subscription's secret can verify them
// (computed here independently of activities.Signature).
func TestDeliverSigned(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	got := make(chan *http.Request, 1)
	bodies := make(chan []byte, 1)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
	}))
	defer rcv.Close()
	d := deliveryTo(t, st, rcv.URL)
	sub, err := st.RevealSubscription(context.Background(), store.DefaultAccount, d.SubscriptionID)
	if err != nil || !strings.HasPrefix(sub.SigningSecret, "whsec_") || len(sub.SigningSecret) < 60 {
		t.Fatalf("subscription secret %q (%v)", sub.SigningSecret, err)
	}
	if _, err := acts.Deliver(context.Background(), workflows.DeliverInput{
		DeliveryID: d.ID, ScheduledAt: time.Now(), Timeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	r, body := <-got, <-bodies
	id, ts := r.Header.Get("Webhook-Id"), r.Header.Get("Webhook-Timestamp")
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sub.SigningSecret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q is not whsec_<base64>: %v", sub.SigningSecret, err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if id == "" || ts == "" || r.Header.Get("Webhook-Signature") != want {
		t.Fatalf("headers id=%q ts=%q sig=%q, want sig %q", id, ts, r.Header.Get("Webhook-Signature"), want)
	}
	other := activities.Signature("whsec_other", id, 0, body)
	if other == want {
		t.Fatal("a different secret gives the same signature")
	}
}

// TestSuccessCodesWithRealReceivers: docs/policies.md#eventgrid (200-204 for
// eventgrid and eventgrid-edge) and docs/policies.md#workfront-legacy (200 only), against
// real receivers answering each code (issue 11, item 6).
func TestSuccessCodesWithRealReceivers(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	for _, c := range []struct {
		p    policies.Policy
		code int
		ok   bool
	}{
		{policies.EventGrid(), 204, true}, {policies.EventGrid(), 205, false},
		{policies.EventGridEdge(), 203, true}, {policies.EventGridEdge(), 206, false},
		{policies.WorkfrontLegacy(), 200, true}, {policies.WorkfrontLegacy(), 201, false},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.p.Name, c.code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(c.code) }))
			defer srv.Close()
			d := deliveryTo(t, st, srv.URL)
			res, err := acts.Deliver(context.Background(), workflows.DeliverInput{DeliveryID: d.ID, ScheduledAt: time.Now(),
				Timeout: 5 * time.Second, Success: c.p.SuccessCodes, Health: c.p.Health})
			if err != nil || res.Success != c.ok || res.StatusCode != c.code {
				t.Errorf("success %v (%v), want %v", res.Success, err, c.ok)
			}
		})
	}
}

// TestDeliverTellsFailing: a first attempt made inside a workflow task
// (MayHandOver) to a receiver answering 503 makes its endpoint failing for
// the start queue (Shares.Troubled); the next one, answered 204, ends it.
func TestDeliverTellsFailing(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	acts.Shares = activities.NewShares(4, 8)
	var code atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(code.Load()))
	}))
	defer rcv.Close()
	d := deliveryTo(t, st, rcv.URL)
	for i, answer := range []int32{http.StatusServiceUnavailable, http.StatusNoContent} {
		code.Store(answer)
		if i > 0 {
			d = publishOne(t, st)
		}
		_, err := acts.Deliver(context.Background(), workflows.DeliverInput{DeliveryID: d.ID, EndpointID: d.EndpointID,
			ScheduledAt: time.Now(), Timeout: 5 * time.Second, MayHandOver: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := acts.Shares.Troubled(d.EndpointID); got != (answer != http.StatusNoContent) {
			t.Fatalf("after a %d: Failing %v", answer, got)
		}
	}
}

// publishOne publishes an event of the test's type: one more delivery to
// the subscription deliveryTo made.
func publishOne(t *testing.T, st *store.Store) store.Delivery {
	t.Helper()
	res, err := st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount, Type: t.Name(),
		Data: store.RawJSON(`{"a":1}`)})
	if err != nil || len(res.Deliveries) != 1 {
		t.Fatalf("publish: %v %v", res, err)
	}
	return res.Deliveries[0]
}

// TestDeliverQuickAnswerEndsTrouble: an endpoint slow for the start queue (a local
// first attempt's request out over a second) stays so after attempts made
// outside its share (a handed-over first attempt, a retry) that fail
// or take a second; the first such attempt answered 204 at once ends it.
func TestDeliverQuickAnswerEndsTrouble(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	acts.Shares = activities.NewShares(4, 8)
	var code, delayMs atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(time.Duration(delayMs.Load()) * time.Millisecond)
		w.WriteHeader(int(code.Load()))
	}))
	defer rcv.Close()
	d := deliveryTo(t, st, rcv.URL)
	for i, c := range []struct {
		local         bool
		code, delayMs int32
		troubled      bool
	}{
		{true, http.StatusNoContent, 1100, true},
		{false, http.StatusServiceUnavailable, 0, true},
		{false, http.StatusNoContent, 1100, true},
		{false, http.StatusNoContent, 0, false},
	} {
		code.Store(c.code)
		delayMs.Store(c.delayMs)
		if i > 0 {
			d = publishOne(t, st)
		}
		_, err := acts.Deliver(context.Background(), workflows.DeliverInput{DeliveryID: d.ID, EndpointID: d.EndpointID,
			ScheduledAt: time.Now(), Timeout: 5 * time.Second, MayHandOver: c.local})
		if err != nil {
			t.Fatal(err)
		}
		if got := acts.Shares.Troubled(d.EndpointID); got != c.troubled {
			t.Fatalf("after %d (local %v, %d ms): troubled %v", c.code, c.local, c.delayMs, got)
		}
	}
}
