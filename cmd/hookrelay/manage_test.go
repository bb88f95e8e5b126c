package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/testenv/testapi"
)

// cliUser runs management commands in-process, as `hookrelay` would with
// HOOKRELAY_URL and HOOKRELAY_API_KEY set.
type cliUser struct {
	t    *testing.T
	ctx  context.Context
	vars map[string]string
}

// newCLIUser serves the real API (with a worker) and makes an API key for
// the default account with `hookrelay keys create`, under the admin key.
func newCLIUser(t *testing.T) *cliUser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	url, _ := testapi.Start(t)
	u := &cliUser{t: t, ctx: ctx, vars: map[string]string{"HOOKRELAY_URL": url, "HOOKRELAY_API_KEY": testapi.AdminKey}}
	var key struct {
		Key string `json:"key"`
	}
	u.json(&key, "keys", "create", "acct_default", "--name", "cli test")
	if !strings.HasPrefix(key.Key, "hr_") {
		t.Fatalf("keys create --json gave key %q", key.Key)
	}
	u.vars["HOOKRELAY_API_KEY"] = key.Key
	return u
}

// run runs a command, returning what it printed and its error.
func (u *cliUser) run(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := run(u.ctx, args, env(u.vars), &out, &errOut)
	return out.String(), err
}

// ok runs a command that must succeed.
func (u *cliUser) ok(args ...string) string {
	u.t.Helper()
	out, err := u.run(args...)
	if err != nil {
		u.t.Fatalf("hookrelay %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// json runs a command with --json and decodes what it printed into v.
func (u *cliUser) json(v any, args ...string) {
	u.t.Helper()
	out := u.ok(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		u.t.Fatalf("hookrelay %s --json printed %q: %v", strings.Join(args, " "), out, err)
	}
}

// fails runs a command that must fail with an error containing want.
func (u *cliUser) fails(want string, args ...string) {
	u.t.Helper()
	if _, err := u.run(args...); err == nil || !strings.Contains(err.Error(), want) {
		u.t.Fatalf("hookrelay %s: error %v, want one with %q", strings.Join(args, " "), err, want)
	}
}

// waitFor runs the command until its output contains want.
func (u *cliUser) waitFor(want string, args ...string) string {
	u.t.Helper()
	return u.waitUntil(func(out string) bool { return strings.Contains(out, want) }, args...)
}

// waitUntil runs the command until done(its output).
func (u *cliUser) waitUntil(done func(out string) bool, args ...string) string {
	u.t.Helper()
	for {
		out, err := u.run(args...)
		if err == nil && done(out) {
			return out
		}
		if u.ctx.Err() != nil {
			u.t.Fatalf("hookrelay %s: still %v %s", strings.Join(args, " "), err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rows is how many lines a table has below its header.
func rows(table string) int { return strings.Count(strings.TrimSpace(table), "\n") }

// apiGet is the API's own answer to GET path, with the user's key.
func (u *cliUser) apiGet(path string) string {
	u.t.Helper()
	req, _ := http.NewRequestWithContext(u.ctx, http.MethodGet, u.vars["HOOKRELAY_URL"]+path, nil)
	req.Header.Set("Authorization", "Bearer "+u.vars["HOOKRELAY_API_KEY"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// lineWith is the first line of text containing every one of parts.
func lineWith(text string, parts ...string) string {
	for _, l := range strings.Split(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return l
		}
	}
	return ""
}

// receiver is a real webhook receiver answering 400 until healthy.
func receiver(t *testing.T, healthy *atomic.Bool) string {
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(rcv.Close)
	return rcv.URL
}
