package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// openRun is a run the test starts and leaves open (no worker polls its
// task queue): its type, input and recorded changes.
type openRun struct {
	typ     string
	input   map[string]any
	changes []string
}

// TestVersions: `hookrelay versions` against the dev server lists the open
// runs of each workflow type by version: Deliveries by their input's
// version, or by the local-bookkeeping change they recorded, or 0 with
// neither; other types by the changes they recorded. Closed runs are not
// counted, and a type without open runs has its row.
func TestVersions(t *testing.T) {
	t.Parallel()
	srv := testenv.TemporalServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := fmt.Sprintf("versions-%d", time.Now().UnixNano())
	c := versionsNamespace(ctx, t, srv.Address, ns)
	runs := []openRun{
		{"Delivery", map[string]any{"DeliveryID": "a", "Version": 5}, nil},
		{"Delivery", map[string]any{"DeliveryID": "b", "Version": 5}, []string{"no-catch-up-1"}},
		{"Delivery", map[string]any{"DeliveryID": "c", "Version": 4}, nil},
		{"Delivery", map[string]any{"DeliveryID": "d"}, []string{"local-bookkeeping-3", "no-catch-up-1"}},
		{"Delivery", map[string]any{"DeliveryID": "e"}, nil},
		{"Sequencer", map[string]any{}, nil},
		{workflows.EndpointWorkflowType, map[string]any{}, []string{"some-change-1"}},
	}
	for i, r := range runs {
		startOpen(ctx, t, c, fmt.Sprintf("run-%d", i), r)
	}
	closed := startOpen(ctx, t, c, "closed", openRun{"Delivery", map[string]any{"Version": 5}, nil})
	if err := c.TerminateWorkflow(ctx, closed, "", "closed for the test"); err != nil {
		t.Fatal(err)
	}
	waitListed(ctx, t, c, ns, len(runs))
	var out, errOut bytes.Buffer
	vars := env(map[string]string{"TEMPORAL_ADDRESS": srv.Address, "TEMPORAL_NAMESPACE": ns, "HOOKRELAY_INSECURE_NO_AUTH": "true"})
	if err := run(ctx, []string{"versions", "--json"}, vars, &out, &errOut); err != nil {
		t.Fatalf("versions: %v\n%s", err, errOut.String())
	}
	var got struct{ Versions []versionRow }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	want := map[string]int{"Delivery 0": 1, "Delivery 3": 1, "Delivery 4": 1, "Delivery 5": 2, "Sequencer initial": 1,
		"Endpoint some-change-1": 1, "Batcher -": 0, "Batch -": 0, "EventGridValidation -": 0}
	seen := map[string]int{}
	for _, r := range got.Versions {
		seen[r.WorkflowType+" "+r.Version] = r.Open
		if r.Open > 0 && r.OldestStart == nil {
			t.Errorf("%s %s: no oldest start", r.WorkflowType, r.Version)
		}
		if r.WorkflowType == "Delivery" && r.Version == "5" && r.Changes["no-catch-up-1"] != 1 {
			t.Errorf("Delivery 5's changes: %v", r.Changes)
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("open runs by version: %v, want %v", seen, want)
	}
	out.Reset()
	if err := run(ctx, []string{"versions"}, vars, &out, &errOut); err != nil || !strings.Contains(out.String(), "local-bookkeeping-3 (1), no-catch-up-1 (1)") {
		t.Errorf("versions table (%v):\n%s", err, out.String())
	}
}

// versionsNamespace registers ns on the server and dials it.
func versionsNamespace(ctx context.Context, t *testing.T, addr, ns string) client.Client {
	t.Helper()
	c, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if _, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return c
}

// startOpen starts r on a task queue no worker polls, so it stays open,
// and returns its id. Its recorded changes are set at its start, where
// workflow.GetVersion would upsert them.
func startOpen(ctx context.Context, t *testing.T, c client.Client, id string, r openRun) string {
	t.Helper()
	opts := client.StartWorkflowOptions{ID: id, TaskQueue: "versions-nobody-polls"}
	if len(r.changes) > 0 {
		opts.TypedSearchAttributes = temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeywordList(workflows.ChangeVersionAttribute).ValueSet(r.changes))
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, err := c.ExecuteWorkflow(ctx, opts, r.typ, r.input)
		if err == nil {
			return id
		}
		if time.Now().After(deadline) { // a namespace just registered can take a moment to be known
			t.Fatalf("starting %s: %v", id, err)
		}
	}
}

// waitListed waits until visibility lists n open runs in ns.
func waitListed(ctx context.Context, t *testing.T, c client.Client, ns string, n int) {
	t.Helper()
	req := &workflowservice.CountWorkflowExecutionsRequest{Namespace: ns, Query: "ExecutionStatus = 'Running'"}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		resp, err := c.CountWorkflow(ctx, req)
		if err == nil && resp.GetCount() == int64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("visibility lists %d open runs (%v), want %d", resp.GetCount(), err, n)
		}
	}
}
