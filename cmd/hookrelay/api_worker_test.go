package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestAPIMakesFirstAttempts: issue 22. `hookrelay api` runs a worker on the
// workflows' task queue (HOOKRELAY_API_WORKER, on by default), so that the
// deliveries it starts start eagerly in its own process and make their
// first attempt there: with no `hookrelay worker` at all on the namespace,
// a publication reaches its receiver and ends delivered, with one attempts
// row (the publication handed its target over, store.FirstAttempts).
func TestAPIMakesFirstAttempts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := make(chan string, 1)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Webhook-Id")
	}))
	defer rcv.Close()
	base, _, _ := runAPI(ctx, t, nil)
	post(t, base+"/v1/subscriptions", `{"url": "`+rcv.URL+`/hook", "event_types": ["a"], "policy": "eventgrid"}`)
	var pub struct {
		Deliveries []struct {
			ID string `json:"id"`
		} `json:"deliveries"`
	}
	decodeJSON(t, postBody(t, base+"/v1/events", `{"id": "ev-1", "type": "a", "data": {}}`), &pub)
	if len(pub.Deliveries) != 1 {
		t.Fatalf("published %+v, want one delivery", pub)
	}
	select {
	case id := <-got:
		if id != "ev-1" {
			t.Fatalf("receiver got %q", id)
		}
	case <-ctx.Done():
		t.Fatal("no attempt reached the receiver: the API made no first attempt")
	}
	waitDelivered(ctx, t, base+"/v1/events/ev-1")
	var d struct {
		Attempts []struct {
			Success   bool   `json:"success"`
			ErrorKind string `json:"error_kind"`
		} `json:"attempt_list"`
	}
	resp, err := http.Get(base + "/v1/deliveries/" + pub.Deliveries[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	decodeJSON(t, b, &d)
	if len(d.Attempts) != 1 || !d.Attempts[0].Success {
		t.Errorf("attempts %+v, want one, a success", d.Attempts)
	}
}

// runAPI runs `hookrelay api` in the open mode, with more settings, in the
// environment setUpAPI prepares, until the test ends or stop is called; stop
// waits for it to end and returns its error. It returns the API's base URL,
// once it is ready, and the namespace.
func runAPI(ctx context.Context, t *testing.T, more map[string]string) (base, ns string, stop func() error) {
	t.Helper()
	kv := map[string]string{"HOOKRELAY_INSECURE_NO_AUTH": "true", "HOOKRELAY_EGRESS_ALLOW": "127.0.0.0/8"}
	maps.Copy(kv, more)
	getenv, addr := setUpAPI(ctx, t, "api", kv)
	apiCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(apiCtx, []string{"api"}, getenv, io.Discard, io.Discard) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	base = "http://" + addr
	if err := devenv.WaitReady(base+"/readyz", time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	return base, getenv("TEMPORAL_NAMESPACE"), stop
}

// setUpAPI is the environment of a `hookrelay api` on a free loopback
// port (addr) with settings, on a real database and a fresh namespace of a
// real Temporal server, which `hookrelay setup` prepared (it returns once
// the namespace accepts the search attributes).
func setUpAPI(ctx context.Context, t *testing.T, name string, settings map[string]string) (getenv func(string) string, addr string) {
	t.Helper()
	srv := testenv.TemporalServer(t)
	port, err := devenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr = "127.0.0.1:" + strconv.Itoa(port)
	ns := fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
	kv := map[string]string{"DATABASE_URL": testenv.DatabaseURL(t), "TEMPORAL_ADDRESS": srv.Address,
		"TEMPORAL_NAMESPACE": ns, "HOOKRELAY_HTTP_ADDR": addr, "HOOKRELAY_ENCRYPTION_KEYS": testenv.EncryptionKeys()}
	maps.Copy(kv, settings)
	var errOut bytes.Buffer
	if err := run(ctx, []string{"setup", "--create-namespace"}, env(kv), io.Discard, &errOut); err != nil {
		t.Fatalf("setup: %v\n%s", err, errOut.String())
	}
	return env(kv), addr
}

// post POSTs body to url and fails the test unless it is accepted.
func post(t *testing.T, url, body string) {
	t.Helper()
	postBody(t, url, body)
}

// postBody is post, returning the answer's body.
func postBody(t *testing.T, url, body string) []byte {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %s %s", url, resp.Status, b)
	}
	return b
}

// decodeJSON decodes b into v or fails the test.
func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// waitDelivered polls the event at url until its delivery is delivered.
func waitDelivered(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	for ctx.Err() == nil {
		var ev struct {
			Deliveries []struct {
				Status string `json:"status"`
			} `json:"deliveries"`
		}
		if resp, err := http.Get(url); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&ev)
			resp.Body.Close()
		}
		if len(ev.Deliveries) == 1 && ev.Deliveries[0].Status == "delivered" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the delivery never ended delivered")
}
