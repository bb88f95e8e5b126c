package workflows_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestDeliveryOnRealServers: POLICIES.md §Custom policies, end to end: the
// real Temporal dev server, PostgreSQL and worker, the workflow started as
// the API starts it. A receiver that fails twice under gaps of 1 s and 2 s
// gets three attempts, recorded in PostgreSQL, whose start times are the
// policy's gaps apart (within 1 s), and the delivery ends delivered.
func TestDeliveryOnRealServers(t *testing.T) {
	t.Parallel()
	c := testenv.Client(t)
	st := testenv.Store(t)
	s := startWorkers(t, c, st)
	f := newFixtureOn(t, st, policies.NameCustom, `{"custom": {"kind": "gaps", "seconds": [1, 2]}}`,
		failFirst(2, http.StatusServiceUnavailable))
	startDelivery(t, c, s, f)
	res := awaitDelivery(t, c, f, 2*time.Minute)
	f.check(t, outcome{res: res}, want{status: "delivered", attempts: 3})
	as := f.attempts(t)
	for i, gap := range secList(1, 2) {
		got := as[i+1].StartedAt.Sub(as[i].StartedAt)
		if got < gap || got > gap+time.Second {
			t.Errorf("attempt %d started %v after attempt %d, want %v (+1 s at most)", i+1, got, i, gap)
		}
	}
	if d := f.reload(t); !d.Started {
		t.Error("delivery not marked started")
	}
}
