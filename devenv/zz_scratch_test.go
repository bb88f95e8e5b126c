package devenv

import (
"path/filepath"
"testing"
"time"
"go.temporal.io/sdk/client"
)

func TestScratchTiming2(t *testing.T) {
	cfg := headlessConfig(t)
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'cfg := headlessConfig(t)')
	cfg.DBFile = filepath.Join(t.TempDir(), "temporal.db")
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'cfg.DBFile = filepath.Join(t.TempDir(), ')
	cfg.SearchAttributes = map[string]string{"EndpointId": "Keyword"}
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'cfg.SearchAttributes = map[string]string')
	first := startTemporal(t, cfg)
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'first := startTemporal(t, cfg)')
	opts := client.StartWorkflowOptions{ID: "devenv-persist", TaskQueue: "devenv-none"}
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'opts := client.StartWorkflowOptions{ID: ')
	if _, err := dialTemporal(t, first).ExecuteWorkflow(t.Context(), opts, "Nothing"); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after block", time.Now().Format("15:04:05.000"))
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after block", time.Now().Format("15:04:05.000"))

	// Restart on the same file with one more search attribute.
	cfg.SearchAttributes = map[string]string{"EndpointId": "Keyword", "Attempts": "Int"}
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'cfg.SearchAttributes = map[string]string')
	second := startTemporal(t, cfg)
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'second := startTemporal(t, cfg)')
	c := dialTemporal(t, second)
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'c := dialTemporal(t, second)')
	if _, err := c.DescribeWorkflowExecution(t.Context(), "devenv-persist", ""); err != nil {
		t.Errorf("workflow lost across restart: %v", err)
	}
	t.Logf("%s after block", time.Now().Format("15:04:05.000"))
	assertSearchAttributes(t, c, cfg.Namespace, "EndpointId", "Attempts")
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'assertSearchAttributes(t, c, cfg.Namespa')
	if err := second.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after block", time.Now().Format("15:04:05.000"))

	// A type clash with the file is reported rather than ignored.
	cfg.SearchAttributes = map[string]string{"EndpointId": "Int"}
	t.Logf("%s: %s", time.Now().Format("15:04:05.000"), 'cfg.SearchAttributes = map[string]string')
	if tmp, err := StartTemporal(t.Context(), cfg, testLogger(t)); err == nil {
		tmp.Stop()
		t.Error("StartTemporal accepted a search attribute type clash")
	}
	t.Logf("%s after block", time.Now().Format("15:04:05.000"))
}
