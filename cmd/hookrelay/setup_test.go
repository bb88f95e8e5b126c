package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hookrelay/hookrelay/testenv"
)

// TestStartNeedsSetup: issue 13. Against a namespace without hookrelay's
// search attributes, `hookrelay worker` and `hookrelay api` stop at start
// with the error that names `hookrelay setup`. `hookrelay setup` refuses a
// missing namespace unless told to create it; `hookrelay setup
// --create-namespace`, run twice (it is idempotent), registers the namespace
// and every attribute.
func TestStartNeedsSetup(t *testing.T) {
	t.Parallel()
	srv := testenv.TemporalServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: srv.Address})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := map[string]string{"DATABASE_URL": testenv.DatabaseURL(t), "TEMPORAL_ADDRESS": srv.Address,
		"HOOKRELAY_INSECURE_NO_AUTH": "true", "HOOKRELAY_ENCRYPTION_KEYS": testenv.EncryptionKeys()}
	bare := fmt.Sprintf("bare-%d", time.Now().UnixNano())
	if _, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: bare, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	for _, cmd := range []string{"worker", "api"} {
		err := run(ctx, []string{cmd}, withEnv(base, "TEMPORAL_NAMESPACE", bare), &out, &errOut)
		if !errors.Is(err, errNotSetUp) || !strings.Contains(err.Error(), "hookrelay setup") {
			t.Errorf("%s on a namespace without the attributes: %v", cmd, err)
		}
	}
	fresh := withEnv(base, "TEMPORAL_NAMESPACE", bare+"-new")
	if err := run(ctx, []string{"setup"}, fresh, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--create-namespace") {
		t.Fatalf("setup of a missing namespace: %v", err)
	}
	for range 2 {
		if err := run(ctx, []string{"setup", "--create-namespace"}, fresh, &out, &errOut); err != nil {
			t.Fatalf("setup: %v\n%s", err, errOut.String())
		}
	}
	if missing, err := missingSearchAttributes(ctx, c, bare+"-new"); err != nil || len(missing) != 0 {
		t.Fatalf("after setup: missing %v (%v)", missing, err)
	}
}

// withEnv is base with k set to v, as a getenv.
func withEnv(base map[string]string, k, v string) func(string) string {
	m := map[string]string{k: v}
	for bk, bv := range base {
		if bk != k {
			m[bk] = bv
		}
	}
	return env(m)
}
