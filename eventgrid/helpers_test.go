package eventgrid_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"

	"go.temporal.io/sdk/client"
)

// request is what the receiver got in one request.
type request struct {
	Header http.Header
	Events []map[string]any
	Status int // what the receiver answered
}

// receiver is a real HTTP receiver answering script(n) to the n-th request.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []request
	script func(n int) int
}

func newReceiver(t *testing.T, script func(n int) int) *receiver {
	t.Helper()
	r := &receiver{script: script}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var evs []map[string]any
		_ = json.Unmarshal(body, &evs)
		r.mu.Lock()
		n := len(r.reqs)
		code := r.script(n)
		r.reqs = append(r.reqs, request{Header: req.Header.Clone(), Events: evs, Status: code})
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.reqs...)
}

func always(code int) func(int) int { return func(int) int { return code } }

// apiServer is the real API on st; c may be nil when no test path starts a
// workflow through it.
func apiServer(t *testing.T, st *store.Store, c client.Client, d policies.EdgeDefaults) http.Handler {
	s := testenv.Starter(t, c, st)
	s.Defaults = d
	return api.New(&api.Server{Store: st, Temporal: c, Logger: testenv.Logger(), Auth: api.Auth{Open: true}, Egress: testenv.Egress(), Starter: s})
}

// call sends one request to h and returns the status and body.
func call(t *testing.T, h http.Handler, method, path, contentType, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// putSub creates an Event Grid subscription through the API and returns it.
func putSub(t *testing.T, st *store.Store, h http.Handler, name, query, props string) store.Subscription {
	t.Helper()
	code, body := call(t, h, http.MethodPut, "/eventgrid/subscriptions/"+name+query, "application/json", `{"properties":`+props+`}`)
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("PUT %s: %d %s", name, code, body)
	}
	sub, err := st.GetSubscriptionByName(context.Background(), "acct_default", name)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// webhook is a destination for url.
func webhook(url string, extra string) string {
	return `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"` + url + `"` + extra + `}}`
}

// egEvents is a body of n Event Grid events of type typ.
func egEvents(prefix, typ string, n int) string {
	var b bytes.Buffer
	b.WriteString("[")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		ev, _ := json.Marshal(map[string]any{"id": prefix + "-" + itoa(i), "eventType": typ, "subject": "/s/" + itoa(i),
			"eventTime": "2024-05-01T10:00:00Z", "data": map[string]int{"n": i}, "dataVersion": "2.0"})
		b.Write(ev)
	}
	b.WriteString("]")
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
