package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

// testAPI is the API on a real store, with a real Temporal client when c is
// not nil.
func testAPI(t *testing.T, st *store.Store, c client.Client) *echo.Echo {
	t.Helper()
	logger := testenv.Logger()
	return validated(t, &Server{Store: st, Temporal: c, Logger: logger, Auth: Auth{Open: true}, Egress: testenv.Egress(),
		Starter: testenv.Starter(t, c, st)})
}

// runWorker runs a real worker for the test's duration.
func runWorker(t *testing.T, st *store.Store, c client.Client) {
	t.Helper()
	testenv.Worker(t, c, st, worker.Options{HTTPConcurrency: 20})
}

// call sends one request through e.ServeHTTP and decodes the JSON answer.
func call(t *testing.T, e *echo.Echo, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	var out map[string]any
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: answer is not JSON: %q", method, path, rec.Body.String())
		}
	}
	return rec.Code, out
}

// receiver is a real HTTP webhook receiver that records what it gets and
// answers with the scripted codes (then 200).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	script []int
}

func newReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{script: script}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.bodies)
		r.bodies = append(r.bodies, b)
		r.mu.Unlock()
		code := http.StatusOK
		if n < len(r.script) {
			code = r.script[n]
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) received() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(b))
}

func testenvStore(t *testing.T) *store.Store { return testenv.Store(t) }

func testenvClient(t *testing.T) client.Client { return testenv.Client(t) }
