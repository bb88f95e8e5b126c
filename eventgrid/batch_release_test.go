package eventgrid_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestEdgeBatchWaitsForDisabledEndpoint: docs/policies.md#iot-edge-output-batching
// under the docs/policies.md#workfront-circuit-breaker, end to end on the real
// worker and Temporal server. Batches to a disabled endpoint make no
// request and wait; the operator's enable makes the endpoint workflow
// release its waiting deliveries, which reaches the Batch workflows, and
// every event is then delivered once.
func TestEdgeBatchWaitsForDisabledEndpoint(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	c := testenv.Client(t)
	runWorker(t, c, st)
	h := apiServer(t, st, c, policies.EdgeDefaults{})
	recv := newReceiver(t, always(http.StatusOK))
	sub := putSub(t, st, h, "gated", "?mode=edge", `{`+webhook(recv.URL, "")+`,
		"filter":{"includedEventTypes":["g.evt"]},"outputBatching":{"maxEventsPerBatch":5}}`)
	if _, err := st.DB().Exec(`UPDATE endpoints SET state = 'disabled' WHERE id = $1`, sub.EndpointID); err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, h, http.MethodPost, "/eventgrid/events", "application/json", egEvents("g", "g.evt", 10)); code != http.StatusOK {
		t.Fatalf("publish: %d %s", code, body)
	}
	waitStatus(t, st, sub.ID, "waiting", 10)
	if n := len(recv.requests()); n != 0 {
		t.Fatalf("%d requests to a disabled endpoint, want 0", n)
	}
	if code, body := call(t, h, http.MethodPost, "/v1/endpoints/"+sub.EndpointID+"/enable", "", ""); code >= 300 {
		t.Fatalf("enable: %d %s", code, body)
	}
	waitDelivered(t, st, sub.ID, 10, time.Minute)
	eachOnce(t, recv.requests(), "g", 10)
}
