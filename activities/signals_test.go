package activities_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/mock"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestHealthSignalChoice: which signal each attempt sends the endpoint's
// workflow (docs/policies.md#workfront, docs/policies.md#common-rules), without
// Temporal: a 410 under rules that disable on it sends gone, under rules that
// do not, nothing; a plain failure below every threshold sends nothing; a probe
// sends its result whatever the answer. The signaler is a function field; the
// store and the receiver are real.
func TestHealthSignalChoice(t *testing.T) {
	t.Parallel()
	gone := policies.WorkfrontHealth
	gone.DisableOnGone = true
	noGone := gone
	noGone.DisableOnGone = false
	cases := []struct {
		name   string
		code   int
		probe  bool
		health policies.Health
		want   string
	}{
		{"410 disables", http.StatusGone, false, gone, workflows.SignalGone},
		{"410 ignored", http.StatusGone, false, noGone, ""},
		{"500 below thresholds", http.StatusInternalServerError, false, gone, ""},
		{"failed probe", http.StatusInternalServerError, true, gone, workflows.SignalProbeResult},
		{"successful probe", http.StatusOK, true, gone, workflows.SignalProbeResult},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := signalFor(t, c.code, c.probe, c.health); got != c.want {
				t.Errorf("signal %q, want %q", got, c.want)
			}
		})
	}
}

// signalFor makes one attempt answered with code and returns the signal it
// sent ("" for none).
func signalFor(t *testing.T, code int, probe bool, h policies.Health) string {
	st := testenv.Store(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
	defer srv.Close()
	d := deliveryTo(t, st, srv.URL)
	setGoneRule(t, st, d.EndpointID, h.DisableOnGone)
	if probe {
		if _, err := st.DB().Exec(`UPDATE endpoints SET state = 'disabled' WHERE id = $1`, d.EndpointID); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var sent []string
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	acts.Signaler = &mock.EndpointSignaler{SignalFn: func(_ context.Context, _, name string, _ any, _ policies.Health) error {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, name)
		return nil
	}}
	_, err := acts.Deliver(context.Background(), workflows.DeliverInput{DeliveryID: d.ID, ScheduledAt: time.Now(),
		Timeout: 5 * time.Second, Probe: probe, Health: h})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) > 1 {
		t.Fatalf("signals %v, want at most one", sent)
	}
	if len(sent) == 0 {
		return ""
	}
	return sent[0]
}

// setGoneRule sets the endpoint's own disable_on_gone rule: the rules in
// force are the endpoint's (docs/policies.md#common-rules), not the delivery's.
func setGoneRule(t *testing.T, st *store.Store, endpointID string, on bool) {
	t.Helper()
	raw := store.RawJSON(fmt.Sprintf(`{"disable_on_gone": %v}`, on))
	if err := st.SetEndpointHealth(context.Background(), store.DefaultAccount, endpointID, raw); err != nil {
		t.Fatal(err)
	}
}
