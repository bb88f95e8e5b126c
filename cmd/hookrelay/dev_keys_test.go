package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDevKeepsItsKey: `hookrelay dev` without a key ring makes a key in its
// data folder (readable by its owner only), seals a new subscription's
// secret with it, and, run again on the same folder, uses the same key: the
// secret still reveals.
func TestDevKeepsItsKey(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	getenv := devEnv(t, addr)
	stop := startDev(t, getenv, addr)
	id, secret := devSubscribe(t, addr)
	stop()
	fi, err := os.Stat(filepath.Join(getenv("HOOKRELAY_DATA_DIR"), devKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	stop = startDev(t, getenv, addr)
	defer stop()
	resp, err := http.Post("http://"+addr+"/v1/subscriptions/"+id+"/reveal-secret", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		SigningSecret string `json:"signing_secret"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.SigningSecret != secret {
		t.Fatalf("after a restart the secret reveals as %d %.10q (%v)", resp.StatusCode, got.SigningSecret, err)
	}
}

// startDev runs `hookrelay dev` until it is ready; stop cancels it and
// waits for it to end.
func startDev(t *testing.T, getenv func(string) string, addr string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"dev"}, getenv, &out, &errOut) }()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(out.String(), "hookrelay is running") || !ready(addr); {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("dev ended early: %v\n%s", err, errOut.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("dev not ready:\n%s\n%s", out.String(), errOut.String())
		}
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dev returned %v", err)
		}
	}
}

// devSubscribe subscribes through the dev API and returns the id and secret.
func devSubscribe(t *testing.T, addr string) (id, secret string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/v1/subscriptions", "application/json",
		strings.NewReader(`{"url": "https://receiver.example/hooks", "event_types": ["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var sub struct {
		ID            string `json:"id"`
		SigningSecret string `json:"signing_secret"`
	}
	if json.Unmarshal(b, &sub) != nil || !strings.HasPrefix(sub.SigningSecret, "whsec_") {
		t.Fatalf("subscribe: %d %s", resp.StatusCode, b)
	}
	return sub.ID, sub.SigningSecret
}
