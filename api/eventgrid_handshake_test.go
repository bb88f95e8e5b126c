package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// validator is a real Event Grid WebHook receiver. It answers the validation
// event once gate is open: echoing its data.validationCode when echo is set,
// with a bare 200 otherwise. It records every notification.
type validator struct {
	*httptest.Server
	echo     bool
	gate     chan struct{}
	openGate func()
	mu       sync.Mutex
	codes    []string // validation codes received, in order
	notified [][]byte // notification bodies
}

func newValidator(t *testing.T, echo bool) *validator {
	v := &validator{echo: echo, gate: make(chan struct{})}
	var once sync.Once
	v.openGate = func() { once.Do(func() { close(v.gate) }) }
	v.Server = httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(v.Close)
	t.Cleanup(v.openGate) // runs first: never leave a handshake blocked
	return v
}

func (v *validator) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if req.Header.Get("aeg-event-type") != "SubscriptionValidation" {
		v.mu.Lock()
		v.notified = append(v.notified, body)
		v.mu.Unlock()
		return
	}
	var evs []struct {
		EventType string `json:"eventType"`
		Data      struct {
			ValidationCode string `json:"validationCode"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &evs) != nil || len(evs) != 1 || evs[0].EventType != "Microsoft.EventGrid.SubscriptionValidationEvent" {
		http.Error(w, "not a validation event", http.StatusBadRequest)
		return
	}
	v.mu.Lock()
	v.codes = append(v.codes, evs[0].Data.ValidationCode)
	v.mu.Unlock()
	select {
	case <-v.gate:
	case <-req.Context().Done():
		return
	}
	if v.echo {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": evs[0].Data.ValidationCode})
	}
}

func (v *validator) seen() (codes []string, notified [][]byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.codes...), append([][]byte(nil), v.notified...)
}

// cloudSub is a cloud WebHook subscription body that is not pre-validated.
func cloudSub(url string) string {
	return `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"` + url + `"}}}}`
}

const handshakeEvent = `[{"id":"before-validation","eventType":"order.created","subject":"/orders/1",` +
	`"eventTime":"2024-01-01T00:00:00Z","data":{"order":1}}]`

// TestEventGridHandshakeDeliversPending: a new cloud subscription waits for
// the handshake; an event published meanwhile is kept and delivered as soon
// as the receiver echoes the code.
func TestEventGridHandshakeDeliversPending(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	v := newValidator(t, true)
	runWorker(t, st, c)
	code, sub := call(t, e, http.MethodPut, "/eventgrid/subscriptions/orders", cloudSub(v.URL+"/hook"))
	if code != http.StatusCreated || jpath(sub, "properties", "provisioningState") != "AwaitingManualAction" ||
		jpath(sub, "properties", "hookrelay", "validation") != eventgrid.ValidationPending {
		t.Fatalf("create: %d %v", code, sub)
	}
	// The handshake is held at the gate: the subscription is still pending.
	waitFor(t, "the validation event", 30*time.Second, func() bool { codes, _ := v.seen(); return len(codes) > 0 })
	code, pub := call(t, e, http.MethodPost, "/eventgrid/events", handshakeEvent)
	if code != http.StatusOK || jpath(pub["events"].([]any)[0], "deliveries") != float64(1) {
		t.Fatalf("publish: %d %v", code, pub)
	}
	if _, got := call(t, e, http.MethodGet, "/eventgrid/subscriptions/orders", ""); jpath(got, "properties", "provisioningState") != "AwaitingManualAction" {
		t.Fatalf("before the echo: %v", got)
	}
	stored, err := st.GetSubscriptionByName(context.Background(), store.DefaultAccount, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if codes, notified := v.seen(); codes[0] != eventgrid.Of(stored.Options).ValidationCode || len(notified) != 0 {
		t.Fatalf("validation codes %v (stored %s), notifications %q before validation", codes, stored.Options, notified)
	}
	v.openGate()
	waitFor(t, "provisioningState Succeeded", 60*time.Second, func() bool {
		_, got := call(t, e, http.MethodGet, "/eventgrid/subscriptions/orders", "")
		return jpath(got, "properties", "provisioningState") == "Succeeded"
	})
	var delivered []struct{ ID, EventType string }
	waitFor(t, "the pending event", 60*time.Second, func() bool {
		_, notified := v.seen()
		return len(notified) == 1 && json.Unmarshal(notified[0], &delivered) == nil
	})
	if len(delivered) != 1 || delivered[0].ID != "before-validation" || delivered[0].EventType != "order.created" {
		t.Fatalf("receiver got %+v", delivered)
	}
	waitFor(t, "the delivery recorded as delivered", 30*time.Second, func() bool {
		_, ev := call(t, e, http.MethodGet, "/v1/events/before-validation", "")
		ds, _ := ev["deliveries"].([]any)
		return len(ds) == 1 && jpath(ds[0], "status") == "delivered"
	})
}

// TestEventGridHandshakeWithoutEcho: a receiver that answers 200 without the
// code leaves the subscription AwaitingManualAction and delivers nothing.
// (The handshake's 6 tries over ~5 minutes are fixed in
// workflows.EventGridValidation, so Failed is not waited for here.)
func TestEventGridHandshakeWithoutEcho(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	v := newValidator(t, false)
	v.openGate()
	runWorker(t, st, c)
	if code, sub := call(t, e, http.MethodPut, "/eventgrid/subscriptions/silent", cloudSub(v.URL)); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, sub)
	}
	stored, err := st.GetSubscriptionByName(context.Background(), store.DefaultAccount, "silent")
	if err != nil {
		t.Fatal(err)
	}
	in := workflows.ValidationInput{SubscriptionID: stored.ID, Code: eventgrid.Of(stored.Options).ValidationCode}
	t.Cleanup(func() {
		_ = c.TerminateWorkflow(context.Background(), workflows.ValidationStartOptions(testenv.Queues(t), in).ID, "", "test ended")
	})
	if code, pub := call(t, e, http.MethodPost, "/eventgrid/events", handshakeEvent); code != http.StatusOK {
		t.Fatalf("publish: %d %v", code, pub)
	}
	// A second validation request means the first answer was rejected.
	waitFor(t, "a second validation request", 90*time.Second, func() bool { codes, _ := v.seen(); return len(codes) >= 2 })
	_, got := call(t, e, http.MethodGet, "/eventgrid/subscriptions/silent", "")
	if jpath(got, "properties", "provisioningState") != "AwaitingManualAction" ||
		jpath(got, "properties", "hookrelay", "validation") != eventgrid.ValidationPending {
		t.Fatalf("after a non-echo answer: %v", got)
	}
	codes, notified := v.seen()
	if codes[0] != in.Code || codes[1] != in.Code || len(notified) != 0 {
		t.Fatalf("codes %v (want %s), notifications %q", codes, in.Code, notified)
	}
	if ds, err := st.UnstartedOf(context.Background(), stored.ID, 10); err != nil || len(ds) != 1 || ds[0].Status != "pending" {
		t.Fatalf("the event's delivery: %+v %v, want one pending and unstarted", ds, err)
	}
}
