package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/version"
)

func noEnv(string) string { return "" }

// TestPoliciesShowWorkfront: `hookrelay policies show workfront` prints the 11
// retries at their offsets from the first failure (docs/policies.md#workfront).
func TestPoliciesShowWorkfront(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"policies", "show", "workfront"}, noEnv, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	offsets := []string{"84.8s", "254.4s", "593.6s", "1272.0s", "2628.8s", "5342.4s",
		"10769.6s", "21624.0s", "43332.8s", "86750.4s", "173585.6s"}
	for k, off := range offsets {
		line := lineStarting(out.String(), "retry "+itoa(k+1)+" ")
		if !strings.Contains(line, off) {
			t.Errorf("retry %d: want offset %s in %q", k+1, off, line)
		}
	}
	if lineStarting(out.String(), "retry 12 ") != "" {
		t.Errorf("a 12th retry is listed:\n%s", out.String())
	}
	// Adobe's Event Subscriptions FAQ: 5 s to respond (docs/policies.md#workfront).
	if line := lineStarting(out.String(), "Timeout:"); !strings.Contains(line, " 5.0s (5s)") {
		t.Errorf("timeout line %q, want 5.0s", line)
	}
}

func lineStarting(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRunUsage: no command, an unknown command and bad configuration are
// errors; help is not.
func TestRunUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	ctx := context.Background()
	if err := run(ctx, nil, noEnv, &out, &errOut); err == nil || !strings.Contains(errOut.String(), "Usage: hookrelay <command>") {
		t.Errorf("no command: err %v, stderr %q", err, errOut.String())
	}
	if err := run(ctx, []string{"fly"}, noEnv, &out, &errOut); err == nil || !strings.Contains(err.Error(), "fly") {
		t.Errorf("unknown command: %v", err)
	}
	badPort := func(k string) string {
		if k == "HOOKRELAY_PG_PORT" {
			return "nope"
		}
		return ""
	}
	if err := run(ctx, []string{"worker"}, badPort, &out, &errOut); err == nil || !strings.Contains(err.Error(), "HOOKRELAY_PG_PORT") {
		t.Errorf("bad config: %v", err)
	}
	if err := run(ctx, []string{"policies", "show", "nope"}, noEnv, &out, &errOut); err == nil {
		t.Errorf("unknown policy: no error")
	}
	out.Reset()
	if err := run(ctx, []string{"help"}, noEnv, &out, &errOut); err != nil || !strings.Contains(out.String(), "policies show") {
		t.Errorf("help: %v %q", err, out.String())
	}
}

// TestVersion: `hookrelay version` prints the binary's version (a test
// binary has no module version, so the release constant).
func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"version"}, noEnv, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if want := "hookrelay " + version.String(); !strings.HasPrefix(out.String(), want) {
		t.Errorf("version printed %q, want it to start %q", out.String(), want)
	}
}
