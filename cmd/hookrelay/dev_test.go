package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/devenv"
)

// devEnv is the environment of a `hookrelay dev` on free ports with its data
// in a fresh folder the postgres user can reach.
func devEnv(t *testing.T, httpAddr string) func(string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hookrelay-dev-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	env := map[string]string{
		"HOOKRELAY_DATA_DIR":         dir,
		"HOOKRELAY_HTTP_ADDR":        httpAddr,
		"HOOKRELAY_PG_PORT":          fmt.Sprint(freePort(t)),
		"HOOKRELAY_TEMPORAL_UI_PORT": fmt.Sprint(freePort(t)),
		"TEMPORAL_ADDRESS":           fmt.Sprintf("127.0.0.1:%d", freePort(t)),
	}
	return func(k string) string { return env[k] }
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := devenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// syncBuffer is a bytes.Buffer safe to read while run writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDevRunsAndStops: `hookrelay dev` starts PostgreSQL, the Temporal dev
// server, the worker and the API; it becomes ready, and cancelling it (as
// Ctrl-C does) stops everything and returns.
func TestDevRunsAndStops(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"dev"}, devEnv(t, addr), &out, &errOut) }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), "hookrelay is running") || !ready(addr) {
		select {
		case err := <-done:
			t.Fatalf("dev ended early: %v\n%s", err, errOut.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev not ready:\n%s\n%s", out.String(), errOut.String())
		}
	}
	if !strings.Contains(out.String(), "Temporal Web UI: http://127.0.0.1:") {
		t.Errorf("dev printed %q", out.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dev returned %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("dev did not stop after cancel")
	}
}

// ready reports whether hookrelay's own readiness check answers at addr
// (another test's receiver may briefly hold a port that was free).
func ready(addr string) bool {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct {
		Ready bool `json:"ready"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&body) == nil && body.Ready
}

// TestDevFailsWhenAPICannotListen: with the API's address taken, `hookrelay
// dev` stops everything and says why, instead of running without an API.
func TestDevFailsWhenAPICannotListen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"dev"}, devEnv(t, ln.Addr().String()), &out, &errOut)
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "listen") {
			t.Fatalf("dev returned %v, want a listen error", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("dev kept running without its API")
	}
}
