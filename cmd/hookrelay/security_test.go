package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/config"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// TestAPIRefusesToRunOpen: `hookrelay api` without an admin key stops before
// connecting to anything, naming the setting; the explicit insecure setting
// or an admin key gets past that check (to the missing DATABASE_URL here).
func TestAPIRefusesToRunOpen(t *testing.T) {
	var out, errOut bytes.Buffer
	ctx := context.Background()
	err := run(ctx, []string{"api"}, noEnv, &out, &errOut)
	if !errors.Is(err, errNoAdminKey) || !strings.Contains(err.Error(), config.EnvAdminKey) ||
		!strings.Contains(err.Error(), config.EnvInsecureNoAuth) {
		t.Fatalf("no admin key: %v", err)
	}
	for _, e := range []map[string]string{
		{config.EnvInsecureNoAuth: "true"},
		{config.EnvAdminKey: strings.Repeat("k", config.MinAdminKeyLength)},
	} {
		if err := run(ctx, []string{"api"}, env(e), &out, &errOut); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
			t.Errorf("%v: %v, want the DATABASE_URL error", e, err)
		}
	}
	if err := run(ctx, []string{"api"}, env(map[string]string{config.EnvAdminKey: "short"}), &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), config.EnvAdminKey) {
		t.Errorf("short admin key: %v", err)
	}
}

// TestDevOpenOnlyOnLoopback: `hookrelay dev` without an admin key runs open
// only on a loopback address.
func TestDevOpenOnlyOnLoopback(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"dev"}, env(map[string]string{"HOOKRELAY_HTTP_ADDR": "0.0.0.0:8080"}), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("dev on 0.0.0.0 without an admin key: %v", err)
	}
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "[::1]:80": true, "localhost:1": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.1:80": false} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%s) = %v", addr, got)
		}
	}
}

// TestEgressAllowIsRead: a bad prefix in HOOKRELAY_EGRESS_ALLOW stops
// start-up, naming the variable.
func TestEgressAllowIsRead(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"worker"}, env(map[string]string{config.EnvEgressAllow: "10.0.0.0/8,nope"}), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), config.EnvEgressAllow) {
		t.Fatalf("bad allow list: %v", err)
	}
}

// TestDevOpenKeepsMetricsToken: open, `hookrelay dev` still knows the
// metrics token, so a scraper configured with it is not refused as holding
// a bad API key.
func TestDevOpenKeepsMetricsToken(t *testing.T) {
	var out, errOut bytes.Buffer
	a, err := newApp(env(map[string]string{config.EnvMetricsToken: "scraper-token"}), &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := a.devAuth()
	if err != nil || !auth.Open || auth.MetricsToken != "scraper-token" {
		t.Fatalf("devAuth = %+v, %v; want open with the metrics token", auth, err)
	}
}

// TestProductionRefusesLoopbackValidationURL: issue 53, item 7. The workers of
// `hookrelay api` and `hookrelay worker` refuse a validationUrl on a loopback
// address; only `hookrelay dev`'s send one.
func TestProductionRefusesLoopbackValidationURL(t *testing.T) {
	var out, errOut bytes.Buffer
	a, err := newApp(env(map[string]string{}), &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if a.workerOptions(false).LoopbackValidationURL || !a.workerOptions(true).LoopbackValidationURL {
		t.Fatal("production workers may send a loopback validationUrl, or dev's may not")
	}
}

// TestServersRefuseToRunWithoutEncryptionKey: `hookrelay api` and `hookrelay
// worker` without a key ring stop before connecting to anything, saying
// which settings give one and how to make a key; a bad key names its
// setting, never the key.
func TestServersRefuseToRunWithoutEncryptionKey(t *testing.T) {
	base := map[string]string{config.EnvAdminKey: strings.Repeat("k", config.MinAdminKeyLength),
		config.EnvDatabaseURL: "postgres://nobody@127.0.0.1:1/x?sslmode=disable"}
	for _, cmd := range []string{"api", "worker"} {
		err := run(context.Background(), []string{cmd}, env(base), io.Discard, io.Discard)
		if !errors.Is(err, errNoEncryptionKey) || !strings.Contains(err.Error(), config.EnvEncryptionKeys) ||
			!strings.Contains(err.Error(), config.EnvEncryptionKeysFile) || !strings.Contains(err.Error(), "openssl rand -base64 32") {
			t.Errorf("%s without a key: %v", cmd, err)
		}
	}
	bad := maps.Clone(base)
	bad[config.EnvEncryptionKeys] = "c2VjcmV0LWJ1dC1zaG9ydA=="
	err := run(context.Background(), []string{"api"}, env(bad), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), config.EnvEncryptionKeys) || strings.Contains(err.Error(), bad[config.EnvEncryptionKeys]) {
		t.Errorf("a short key: %v", err)
	}
}
