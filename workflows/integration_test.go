package workflows_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/egress"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/testenv/durations"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestDeliveryOnRealServers: docs/policies.md#custom-policies, end to end: the
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
	for i, gap := range durations.List(1, 2) {
		got := as[i+1].StartedAt.Sub(as[i].StartedAt)
		if got < gap || got > gap+time.Second {
			t.Errorf("attempt %d started %v after attempt %d, want %v (+1 s at most)", i+1, got, i, gap)
		}
	}
	if d := f.reload(t); !d.Started {
		t.Error("delivery not marked started")
	}
}

// TestBlockedAttemptEndsAtOnce: issue 10. Under a guard that does not allow
// loopback, an attempt to the loopback receiver is refused before any
// connection (error kind "blocked", nothing of the target kept) and the
// delivery ends at once as the policy ends a final failure, although
// Workfront's policy would retry a failure for 48 hours.
func TestBlockedAttemptEndsAtOnce(t *testing.T) {
	t.Parallel()
	c := testenv.Client(t)
	st := testenv.Store(t)
	s := testenv.Worker(t, c, st, worker.Options{Egress: egress.New(nil)})
	f := newFixtureOn(t, st, policies.NameWorkfront, "", always(http.StatusOK))
	startDelivery(t, c, s, f)
	res := awaitDelivery(t, c, f, time.Minute)
	if res.Status != f.policy.FinalStatus() || res.Attempts != 1 || !strings.HasPrefix(res.Reason, "Blocked: ") {
		t.Fatalf("result %+v, want %s after 1 attempt, reason Blocked: …", res, f.policy.FinalStatus())
	}
	as := f.attempts(t)
	if len(as) != 1 || as[0].ErrorKind != workflows.KindBlocked || as[0].StatusCode != 0 ||
		as[0].ResponseBody != "" || len(as[0].ResponseHeaders) > 2 {
		t.Fatalf("attempts %+v, want one blocked attempt with nothing of the target", as)
	}
	if n := f.recv.requests(); n != 0 {
		t.Fatalf("the receiver got %d requests, want 0", n)
	}
}
