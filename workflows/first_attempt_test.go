package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestFirstAttemptSuccessIsOneStep: issue 12. On the real servers, a
// delivery whose first attempt succeeds takes one workflow task and one
// bookkeeping step: its history holds the Deliver local activity's marker
// and no Finish marker (the attempt recorded the delivery as delivered),
// and PostgreSQL has the delivery delivered, finished, with one attempt.
func TestFirstAttemptSuccessIsOneStep(t *testing.T) {
	t.Parallel()
	c := testenv.Client(t)
	st := testenv.Store(t)
	s := startWorkers(t, c, st)
	f := newFixtureOn(t, st, policies.NameEventGrid, "", always(http.StatusOK))
	startDelivery(t, c, s, f)
	res := awaitDelivery(t, c, f, time.Minute)
	f.check(t, outcome{res: res}, want{status: "delivered", attempts: 1})
	if d := f.reload(t); d.FinishedAt == nil {
		t.Errorf("delivery %+v has no finished_at", d)
	}
	markers, tasks := historyShape(t, c, f.delivery.WorkflowID)
	if markers != "Deliver" || tasks != 1 {
		t.Fatalf("history: markers %q, %d workflow tasks; want only Deliver, 1 task", markers, tasks)
	}
}

// historyShape lists the local activity types of a workflow's markers and
// counts its completed workflow tasks.
func historyShape(t *testing.T, c client.Client, id string) (markers string, tasks int) {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var types []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch e.GetEventType() {
		case enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			tasks++
		case enums.EVENT_TYPE_MARKER_RECORDED:
			if a := e.GetMarkerRecordedEventAttributes(); a.GetMarkerName() == "LocalActivity" {
				types = append(types, localActivityType(t, a.GetDetails()["data"].GetPayloads()))
			}
		}
	}
	return strings.Join(types, " "), tasks
}

// localActivityType is the activity type in a local activity marker's data.
func localActivityType(t *testing.T, ps []*commonpb.Payload) string {
	t.Helper()
	var data struct{ ActivityType string }
	if len(ps) == 0 || json.Unmarshal(ps[0].GetData(), &data) != nil {
		t.Fatalf("local activity marker without readable data: %v", ps)
	}
	return data.ActivityType
}

// TestIdentityOnlyOffTheCommonPath: issue 22. A delivery delivered by its
// first attempt closes with none of hookrelay's search attributes (it
// started with none); one whose first attempt failed carries its identity (EndpointId,
// SubscriptionId, EventType, Policy) beside DeliveryStatus and Attempts, so
// the Web UI's filters find every delivery that left the common path.
func TestIdentityOnlyOffTheCommonPath(t *testing.T) {
	t.Parallel()
	c := testenv.Client(t)
	st := testenv.Store(t)
	s := startWorkers(t, c, st)
	quiet := newFixtureOn(t, st, policies.NameEventGrid, "", always(http.StatusOK))
	retried := newFixtureOn(t, st, policies.NameCustom, `{"custom": {"kind": "fixed", "interval_seconds": 1}}`,
		failFirst(1, http.StatusServiceUnavailable))
	for _, f := range []*fixture{quiet, retried} {
		startDelivery(t, c, s, f)
		awaitDelivery(t, c, f, time.Minute)
	}
	quietAttrs := searchAttributes(t, c, quiet.delivery.WorkflowID)
	for k := range workflows.SearchAttributes() {
		if v, ok := quietAttrs[k]; ok {
			t.Errorf("first-attempt success has search attribute %s = %q, want none of hookrelay's", k, v)
		}
	}
	// README.md#in-the-temporal-web-ui: found by its id's prefix.
	prefix := strings.Join(strings.Split(quiet.delivery.WorkflowID, "/")[:2], "/") + "/"
	testenv.AwaitListed(t, c, fmt.Sprintf("WorkflowId STARTS_WITH %q", prefix), func(runs []*workflowpb.WorkflowExecutionInfo) bool {
		return slices.ContainsFunc(runs, func(r *workflowpb.WorkflowExecutionInfo) bool {
			return r.GetExecution().GetWorkflowId() == quiet.delivery.WorkflowID
		})
	})
	got := searchAttributes(t, c, retried.delivery.WorkflowID)
	want := map[string]string{"EndpointId": retried.sub.EndpointID, "SubscriptionId": retried.sub.ID,
		"EventType": retried.eventType, "Policy": policies.NameCustom, "DeliveryStatus": "delivered"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("retried delivery: %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// searchAttributes are a workflow's keyword search attributes, decoded.
func searchAttributes(t *testing.T, c client.Client, id string) map[string]string {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, p := range d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields() {
		var v string
		if json.Unmarshal(p.GetData(), &v) == nil {
			out[k] = v
		} else {
			out[k] = string(p.GetData())
		}
	}
	return out
}
