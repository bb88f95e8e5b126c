package starter

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
)

// TestVisibleStatusOfRuns: of a workflow's runs, a running one tells its
// status (a reset's new run beside the old, terminated), else the latest.
func TestVisibleStatusOfRuns(t *testing.T) {
	running, terminated := enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED
	failed := enumspb.WORKFLOW_EXECUTION_STATUS_FAILED
	for _, c := range []struct {
		runs []statusAt
		want enumspb.WorkflowExecutionStatus
	}{
		{[]statusAt{{terminated, 1}}, terminated},
		{[]statusAt{{terminated, 1}, {running, 2}}, running},
		{[]statusAt{{running, 1}, {terminated, 2}}, running},
		{[]statusAt{{failed, 1}, {terminated, 2}}, terminated},
		{[]statusAt{{terminated, 2}, {failed, 1}}, terminated},
	} {
		var s statusAt
		for _, r := range c.runs {
			s = s.or(r)
		}
		if s.status != c.want {
			t.Errorf("runs %v: %v, want %v", c.runs, s.status, c.want)
		}
	}
}

// TestIdsQuery: the ids are named between single quotes; one with a quote
// is left out (it is described instead).
func TestIdsQuery(t *testing.T) {
	got := idsQuery(quotable([]string{"delivery/a/b", "x'y", "delivery/c/d"}))
	if want := "WorkflowId IN ('delivery/a/b', 'delivery/c/d')"; got != want {
		t.Errorf("query %q, want %q", got, want)
	}
}
