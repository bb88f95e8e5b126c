package cluster_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hookrelay/hookrelay/cluster"
	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// checkVersions runs `hookrelay versions --json` (bin/hookrelay, as `make
// test-cluster` builds it) against the cluster once its failures have
// run: it lists every workflow type, and no Delivery at another version
// than the one deliveries start with.
func checkVersions(t *testing.T, c *cluster.Cluster) {
	root, err := devenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "bin", "hookrelay"), "versions", "--json")
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+c.Temporal, "TEMPORAL_NAMESPACE=default")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hookrelay versions: %v", err)
	}
	var got struct {
		Versions []struct {
			WorkflowType string `json:"workflow_type"`
			Version      string `json:"version"`
			Open         int    `json:"open"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("hookrelay versions: %v\n%s", err, out)
	}
	open := map[string]int{}
	for _, r := range got.Versions {
		open[r.WorkflowType] += r.Open
		if r.WorkflowType == "Delivery" && r.Open > 0 && r.Version != strconv.Itoa(workflows.DeliveryVersion) {
			t.Errorf("hookrelay versions lists %d open Delivery runs at version %s", r.Open, r.Version)
		}
	}
	for _, typ := range workflows.WorkflowTypes {
		if _, ok := open[typ]; !ok {
			t.Errorf("hookrelay versions has no row for %s:\n%s", typ, out)
		}
	}
	t.Logf("hookrelay versions:\n%s", out)
}
