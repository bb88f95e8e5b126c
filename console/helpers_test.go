package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

// TestMain stops the PostgreSQL and Temporal servers the tests started.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// adminKey is the admin key of the servers that need credentials.
const adminKey = "console-test-admin-key-0123456789"

// server is hookrelay's API with its console, on real PostgreSQL and
// Temporal servers, with a real worker, listening on loopback.
type server struct {
	*httptest.Server
	st *store.Store
}

// newServer starts the API with auth (open: as `hookrelay dev` runs).
func newServer(t *testing.T, open bool) *server {
	t.Helper()
	st, c := testenv.Store(t), testenv.Client(t)
	starter := testenv.Worker(t, c, st, worker.Options{HTTPConcurrency: 20})
	auth := api.Auth{AdminKey: adminKey}
	if open {
		auth = api.Auth{Open: true}
	}
	srv := &api.Server{Store: st, Temporal: c, Logger: testenv.Logger(), Auth: auth, Egress: testenv.Egress(),
		Starter: starter, Console: console.Settings{TemporalUI: "http://127.0.0.1:8233", Namespace: "default"}}
	ts := httptest.NewServer(api.New(srv))
	t.Cleanup(ts.Close)
	return &server{Server: ts, st: st}
}

// account makes an account and an API key of it.
func (s *server) account(t *testing.T, name string) (id, key string) {
	t.Helper()
	ctx := context.Background()
	a, _, err := s.st.CreateAccount(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err = s.st.CreateAPIKey(ctx, a.ID, "console test")
	if err != nil {
		t.Fatal(err)
	}
	return a.ID, key
}

// api makes a /v1 request with the API key (none in open mode) and
// decodes the JSON answer.
func (s *server) api(t *testing.T, key, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, s.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// web is a browser without JavaScript: a cookie jar, no redirect followed.
type web struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newWeb(t *testing.T, s *server) *web {
	jar, _ := cookiejar.New(nil)
	return &web{t: t, base: s.URL, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends one request and reads the whole answer.
func (w *web) do(req *http.Request) (*http.Response, string) {
	w.t.Helper()
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	return resp, string(b)
}

func (w *web) get(path string) (*http.Response, string) {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.base+path, nil)
	return w.do(req)
}

func (w *web) post(path string, form url.Values) (*http.Response, string) {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return w.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token of the forms of the page at path.
func (w *web) csrf(path string) string {
	w.t.Helper()
	resp, body := w.get(path)
	m := csrfField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		w.t.Fatalf("GET %s: %d, no CSRF token in %.300q", path, resp.StatusCode, body)
	}
	return m[1]
}

// login logs in with key through the form.
func (w *web) login(key string) {
	w.t.Helper()
	resp, body := w.post("/console/login", url.Values{"csrf": {w.csrf("/console/login")}, "key": {key}})
	if resp.StatusCode != http.StatusSeeOther {
		w.t.Fatalf("login: %d %.300q", resp.StatusCode, body)
	}
}

// receiver is a real webhook receiver answering with handle (200 when nil),
// counting what it got.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    int
	handle func(w http.ResponseWriter)
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.got++
		h := r.handle
		r.mu.Unlock()
		if h != nil {
			h(w)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// answer sets how the receiver answers from now on.
func (r *receiver) answer(h func(w http.ResponseWriter)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handle = h
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
