package workflows_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv"
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
