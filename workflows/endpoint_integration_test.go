package workflows_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// switchReceiver answers 503 until healthy, then 200, and remembers which
// events (Webhook-Id) it accepted.
type switchReceiver struct {
	*httptest.Server
	healthy  atomic.Bool
	requests atomic.Int64
	mu       sync.Mutex
	got      map[string]bool
}

func newSwitchReceiver(t *testing.T) *switchReceiver {
	r := &switchReceiver{got: map[string]bool{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if !r.healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.mu.Lock()
		r.got[req.Header.Get("Webhook-Id")] = true
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *switchReceiver) accepted(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[id]
}

func (r *switchReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// liveEnv is the real servers with a running hookrelay worker.
type liveEnv struct {
	st      *store.Store
	starter *starter.Starter
}

func newLiveEnv(t *testing.T) *liveEnv {
	t.Helper()
	st, c := testenv.Store(t), testenv.Client(t)
	return &liveEnv{st: st, starter: testenv.Worker(t, c, st, worker.Options{})}
}

func (l *liveEnv) subscribe(t *testing.T, url, retryPolicy string) store.Subscription {
	t.Helper()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: url, EventTypes: []string{"health." + filepath.Base(url)},
		Policy: policies.NameCustom, RetryPolicy: store.RawJSON(retryPolicy), Active: true}
	if err := l.st.CreateSubscription(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

// publish stores one event for sub and starts its delivery; it returns the
// event's id.
func (l *liveEnv) publish(t *testing.T, sub store.Subscription) string {
	t.Helper()
	ctx := context.Background()
	pub, err := l.st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: sub.EventTypes[0], Data: store.RawJSON(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.starter.Start(ctx, pub.Deliveries); err != nil {
		t.Fatal(err)
	}
	return pub.Event.ExternalID
}

// eventually polls cond every 100 ms for up to a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

func (l *liveEnv) endpointState(t *testing.T, id string) string {
	t.Helper()
	e, err := l.st.EndpointByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e.State
}

// TestEndpointHealthLive: with the real servers, an endpoint that keeps
// failing is disabled after 3 consecutive failures (its subscription's own
// threshold), probed every 2 s, re-enabled by the first probe that succeeds,
// and then receives every event that waited.
func TestEndpointHealthLive(t *testing.T) {
	t.Parallel()
	l := newLiveEnv(t)
	recv := newSwitchReceiver(t)
	sub := l.subscribe(t, recv.URL+"/disable", `{"custom":{"kind":"fixed","interval_seconds":1},"max_attempts":100,
		"health":{"disable_consecutive":3,"probe_interval_seconds":2}}`)
	var events []string
	for i := 0; i < 3; i++ {
		events = append(events, l.publish(t, sub))
	}
	eventually(t, "disabled", func() bool { return l.endpointState(t, sub.EndpointID) == policies.StateDisabled })
	for i := 0; i < 3; i++ {
		events = append(events, l.publish(t, sub))
	}
	eventually(t, "a probe while disabled", func() bool {
		ds, _ := l.st.WaitingDeliveries(context.Background(), sub.EndpointID, store.Waiting{}, 10)
		return len(ds) >= 3 && recv.requests.Load() > 3
	})
	recv.healthy.Store(true)
	for _, id := range events {
		eventually(t, "event "+id+" delivered", func() bool { return recv.accepted(id) })
	}
	checkChanges(t, l.st, sub.EndpointID, []string{policies.StateDisabled, policies.StateEnabled}, "probe delivery")
}

// TestEndpointUnfreezeWithTemporalCLI: a frozen endpoint gets nothing until an
// operator sends "unfreeze" with the real temporal CLI; then it receives every
// waiting event, and GET /v1/endpoints/{id} shows the history.
func TestEndpointUnfreezeWithTemporalCLI(t *testing.T) {
	t.Parallel()
	l := newLiveEnv(t)
	recv := newSwitchReceiver(t)
	sub := l.subscribe(t, recv.URL+"/freeze", `{"custom":{"kind":"fixed","interval_seconds":1},"max_attempts":100,
		"health":{"disable_consecutive":2,"freeze_always_after":4,"probe_interval_seconds":2}}`)
	events := []string{l.publish(t, sub), l.publish(t, sub)}
	eventually(t, "frozen", func() bool { return l.endpointState(t, sub.EndpointID) == policies.StateFrozen })
	events = append(events, l.publish(t, sub))
	recv.healthy.Store(true)
	eventually(t, "every delivery waiting", func() bool {
		ds, _ := l.st.WaitingDeliveries(context.Background(), sub.EndpointID, store.Waiting{}, 10)
		return len(ds) == len(events)
	})
	if n := recv.count(); n != 0 {
		t.Fatalf("a frozen endpoint received %d events", n)
	}
	srv := testenv.TemporalServer(t)
	cli := filepath.Join(repoRoot(t), "bin", "temporal")
	out, err := exec.Command(cli, "workflow", "signal", "--workflow-id", workflows.EndpointWorkflowID(sub.EndpointID),
		"--name", "unfreeze", "--address", srv.Address, "--namespace", srv.Namespace).CombinedOutput()
	if err != nil {
		t.Fatalf("temporal workflow signal: %v\n%s", err, out)
	}
	for _, id := range events {
		eventually(t, "event "+id+" delivered", func() bool { return recv.accepted(id) })
	}
	checkChanges(t, l.st, sub.EndpointID,
		[]string{policies.StateDisabled, policies.StateFrozen, policies.StateEnabled}, "unfrozen by operator")
	checkEndpointAPI(t, l.st, sub.EndpointID)
}

func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Dir(filepath.Dir(file))
}

// checkChanges compares the endpoint's recorded changes with the states
// wanted, and the last reason with lastReason's prefix.
func checkChanges(t *testing.T, st *store.Store, id string, states []string, lastReason string) {
	t.Helper()
	cs, err := st.StateChanges(context.Background(), id, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != len(states) {
		t.Fatalf("changes = %+v, want to %v", cs, states)
	}
	for i, c := range cs {
		if c.To != states[i] || c.Reason == "" {
			t.Fatalf("change %d = %+v, want to %s", i, c, states[i])
		}
	}
	if last := cs[len(cs)-1].Reason; len(last) < len(lastReason) || last[:len(lastReason)] != lastReason {
		t.Fatalf("last reason %q, want %q...", last, lastReason)
	}
}

// checkEndpointAPI reads the endpoint through the HTTP API.
func checkEndpointAPI(t *testing.T, st *store.Store, id string) {
	t.Helper()
	e := api.New(&api.Server{Store: st, Temporal: testenv.Client(t), Logger: testenv.Logger(), Auth: api.Auth{Open: true}, Egress: testenv.Egress()})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/endpoints/"+id, nil))
	var body struct {
		State   string `json:"state"`
		Changes []struct {
			To, Reason string
		} `json:"changes"`
		Window struct{ Attempts int64 } `json:"window"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET endpoint: %d %s", rec.Code, rec.Body)
	}
	if body.State != policies.StateEnabled || len(body.Changes) != 3 || body.Changes[2].Reason != "unfrozen by operator" || body.Window.Attempts == 0 {
		t.Fatalf("GET endpoint = %s", rec.Body)
	}
}

// TestEndpointGoneLive: a 410 Gone from the endpoint disables it at once.
func TestEndpointGoneLive(t *testing.T) {
	t.Parallel()
	l := newLiveEnv(t)
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) }))
	t.Cleanup(gone.Close)
	sub := l.subscribe(t, gone.URL+"/gone", `{"custom":{"kind":"fixed","interval_seconds":1},"max_attempts":100}`)
	l.publish(t, sub)
	eventually(t, "disabled", func() bool { return l.endpointState(t, sub.EndpointID) == policies.StateDisabled })
	checkChanges(t, l.st, sub.EndpointID, []string{policies.StateDisabled}, "410 Gone from delivery")
}
