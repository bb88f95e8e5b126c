package workflows_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/workflows"
)

// failAttemptInserts makes PostgreSQL reject recording the first n attempts:
// the Deliver activity then fails after its request went out, as it would
// with the database unreachable.
func failAttemptInserts(t *testing.T, f *fixture, n int) {
	t.Helper()
	_, err := f.st.DB().Exec(`CREATE SEQUENCE test_fail_attempts;
		CREATE FUNCTION test_fail_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('test_fail_attempts') <= ` + itoa(n) + ` THEN
				RAISE EXCEPTION 'injected failure';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER test_fail_attempts BEFORE INSERT ON attempts
			FOR EACH ROW EXECUTE FUNCTION test_fail_attempts();`)
	if err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestInternalFailureIsNotAnAttempt: a failure of hookrelay itself does not
// use up the endpoint's retries (docs/policies.md#sap: 5 retries, then the
// subscription is deactivated). Recording fails twice; the workflow backs off
// 10 s then 20 s, and the delivery ends delivered after one counted attempt,
// its subscription still active.
func TestInternalFailureIsNotAnAttempt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameSAP, "", always(http.StatusOK))
	failAttemptInserts(t, f, 2)
	out := f.run(t)
	if out.res.Status != "delivered" || out.res.Attempts != 1 {
		t.Fatalf("result %+v, want delivered after 1 attempt", out.res)
	}
	if want := []time.Duration{10 * time.Second, 20 * time.Second}; !slices.Equal(out.timers, want) {
		t.Errorf("timers %v, want %v", out.timers, want)
	}
	if as := f.attempts(t); len(as) != 1 || !as[0].Success || as[0].Attempt != 0 {
		t.Errorf("attempt rows %+v, want one successful attempt 0", as)
	}
	if !f.active(t) {
		t.Error("subscription deactivated by hookrelay's own failures")
	}
}

// TestInternalFailurePastDeadline: when hookrelay keeps failing, the delivery
// still ends by its policy's deadline (docs/policies.md#eventgrid-edge: 7,200 s),
// with the reason saying why, instead of running for ever.
func TestInternalFailurePastDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGridEdge, `{"ttl_seconds": 120}`, always(http.StatusOK))
	failAttemptInserts(t, f, 9)
	out := f.run(t)
	if out.res.Status != "dead_lettered" || out.res.Attempts != 0 {
		t.Fatalf("result %+v, want dead_lettered with no counted attempt", out.res)
	}
	if want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}; !slices.Equal(out.timers, want) {
		t.Errorf("timers %v, want %v", out.timers, want)
	}
	if len(out.res.Reason) == 0 {
		t.Error("no reason recorded")
	}
}

// TestInternalFailureOutlastsCountBound: issue 22. A count-bounded policy
// (3 attempts 1 s apart, so its last retry falls 2 s after the first
// failure) is not ended by one failure of hookrelay itself, whose 10 s
// back-off passes that bound: such failures get an hour (make chaos killed a
// worker during an ordered delivery's retry and dead-lettered it).
func TestInternalFailureOutlastsCountBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameCustom, countBound, always(http.StatusOK))
	failAttemptInserts(t, f, 1)
	out := f.run(t)
	if out.res.Status != "delivered" || out.res.Attempts != 1 || !slices.Equal(out.timers, []time.Duration{10 * time.Second}) {
		t.Fatalf("result %+v, timers %v; want delivered after one 10 s back-off", out.res, out.timers)
	}
}

// TestInternalFailureGraceEnds: hookrelay failing for ever still ends a
// count-bounded delivery, an hour after its first failure, saying why.
func TestInternalFailureGraceEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameCustom, countBound, always(http.StatusOK))
	failAttemptInserts(t, f, 1000)
	out := f.run(t)
	var waited time.Duration
	for _, d := range out.timers {
		waited += d
	}
	if out.res.Status == "delivered" || out.res.Attempts != 0 || !strings.HasPrefix(out.res.Reason, "hookrelay could not make the attempt") {
		t.Fatalf("result %+v, want it ended by hookrelay's failures", out.res)
	}
	if waited > time.Hour || waited < 50*time.Minute {
		t.Errorf("backed off %v in all, want close to an hour", waited)
	}
}

// countBound is a custom policy bounded by its attempts only.
const countBound = `{"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 3}`

// TestReEnabledBeforeWaiting: the endpoint is re-enabled (and its waiting
// deliveries released) between the attempt that found it disabled and the
// moment the delivery is recorded as waiting, so no release reaches it. It
// must not wait for its 48-hour limit (docs/policies.md#workfront): it sees the
// endpoint enabled when it records itself waiting, and delivers at once.
func TestReEnabledBeforeWaiting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameWorkfront, "", always(http.StatusOK))
	f.setEndpointState(t, "disabled")
	flipped := false
	out := f.run(t, func(env *testsuite.TestWorkflowEnvironment) {
		// The first attempt is the first local activity (delivery_local.go;
		// the test environment names local activities run by name "func1").
		env.SetOnLocalActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) {
			if !flipped {
				flipped = true
				f.setEndpointState(t, "enabled")
			}
		})
	})
	if out.res.Status != "delivered" || out.res.Attempts != 1 || len(out.timers) != 0 {
		t.Fatalf("result %+v, timers %v; want delivered at once after 1 attempt", out.res, out.timers)
	}
}

// TestTTLCountsFromPublication: the time-to-live counts from when the delivery
// was stored, not from when its workflow started
// (docs/policies.md#eventgrid-edge: retries go on until the event's
// time-to-live). Published 20 minutes before the workflow starts with a
// 30-minute TTL, an always failing edge delivery gets its first attempt and the
// 1-minute retry; the next, 10 minutes later, would come after the TTL.
func TestTTLCountsFromPublication(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameEventGridEdge, `{"ttl_seconds": 1800}`, always(http.StatusServiceUnavailable))
	env := f.newEnv()
	var timers []time.Duration
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { timers = append(timers, d) })
	in := f.input()
	in.PublishedAt = env.Now().Add(-20 * time.Minute)
	env.ExecuteWorkflow(workflows.Delivery, in)
	var res workflows.DeliveryResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 || res.Reason != string(policies.TTLExceeded) || !slices.Equal(timers, []time.Duration{time.Minute}) {
		t.Fatalf("result %+v, timers %v; want 2 attempts, one 1m timer, then TimeToLiveExceeded", res, timers)
	}
}

// TestBatchInternalFailureIsNotAnAttempt: as for single deliveries, a
// failure of hookrelay itself while a batch is attempted (recording fails
// once) does not use up the batch's attempts (docs/policies.md#eventgrid-edge):
// the batch backs off 10 s and is delivered after one counted attempt.
func TestBatchInternalFailureIsNotAnAttempt(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 3, "", always(http.StatusOK))
	failAttemptInserts(t, f.fixture, 1)
	res, timers := f.run(t)
	if res.Status != "delivered" || res.Attempts != 1 || !slices.Equal(timers, []time.Duration{10 * time.Second}) {
		t.Fatalf("result %+v, timers %v; want delivered after 1 attempt and one 10s back-off", res, timers)
	}
	f.checkDeliveries(t, "delivered", "", 1)
}
