package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

const epEventType = "endpoint.test"

// epFixture is one endpoint of a real store, with the real activities.
type epFixture struct {
	st   *store.Store
	acts *activities.Activities
	sub  store.Subscription
	id   string
}

func newEndpoint(t *testing.T, st *store.Store, url string) *epFixture {
	t.Helper()
	f := &epFixture{st: st, acts: activities.New(st, testenv.Logger(), testenv.Egress())}
	f.sub = store.Subscription{AccountID: store.DefaultAccount, URL: url, EventTypes: []string{epEventType}, Policy: policies.NameWorkfront, Active: true}
	if err := st.CreateSubscription(context.Background(), &f.sub); err != nil {
		t.Fatal(err)
	}
	f.id = f.sub.EndpointID
	return f
}

func (f *epFixture) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := f.st.DB().Exec(sql, append([]any{f.id}, args...)...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// counters sets the endpoint's state and counters, and one bucket an hour ago
// holding the window's attempts and failures.
func (f *epFixture) counters(t *testing.T, state string, attempts, failures, consecutive int, lastSuccess time.Duration) {
	t.Helper()
	f.exec(t, `UPDATE endpoints SET state = $2, consecutive_failures = $3,
		last_success_at = now() - $4 * interval '1 second' WHERE id = $1`, state, consecutive, lastSuccess.Seconds())
	if attempts > 0 {
		f.exec(t, `INSERT INTO endpoint_buckets (endpoint_id, bucket_start, attempts, failures)
			VALUES ($1, date_trunc('minute', now() - interval '1 hour'), $2, $3)`, attempts, failures)
	}
}

func (f *epFixture) state(t *testing.T) (string, []store.StateChange) {
	t.Helper()
	e, err := f.st.EndpointByID(context.Background(), f.id)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := f.st.StateChanges(context.Background(), f.id, 100)
	if err != nil {
		t.Fatal(err)
	}
	return e.State, cs
}

func (f *epFixture) env() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(testenv.Logger()))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.RegisterWorkflowWithOptions(workflows.Endpoint, workflow.RegisterOptions{Name: workflows.EndpointWorkflowType})
	env.RegisterActivity(f.acts)
	return env
}

func (f *epFixture) input() workflows.EndpointInput {
	return workflows.EndpointInput{EndpointID: f.id, Health: workfrontGone}
}

// queryState asks the running workflow for its status.
func queryState(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.EndpointStatus {
	t.Helper()
	v, err := env.QueryWorkflow(workflows.QueryState)
	if err != nil {
		t.Fatal(err)
	}
	var s workflows.EndpointStatus
	if err := v.Get(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEndpointThresholds drives the real workflow with real activities over
// counters set in PostgreSQL, at every threshold (docs/policies.md#workfront) and
// one step below it.
func TestEndpointThresholds(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	const h = time.Hour
	cases := []struct {
		name                       string
		from                       string
		attempts, failures, consec int
		lastSuccess                time.Duration
		want                       string
	}{
		{"100 attempts all failed", policies.StateEnabled, 100, 100, 0, h, policies.StateEnabled},
		{"101 attempts all failed", policies.StateEnabled, 101, 101, 0, h, policies.StateDisabled},
		{"70% of 200", policies.StateEnabled, 200, 140, 0, h, policies.StateEnabled},
		{"71% of 200", policies.StateEnabled, 200, 142, 0, h, policies.StateDisabled},
		{"1,999 consecutive", policies.StateEnabled, 0, 0, 1999, h, policies.StateEnabled},
		{"2,000 consecutive", policies.StateEnabled, 0, 0, 2000, h, policies.StateDisabled},
		{"2,000 consecutive, success 73 h ago", policies.StateDisabled, 0, 0, 2000, 73 * h, policies.StateDisabled},
		{"2,001 consecutive, success 71 h ago", policies.StateDisabled, 0, 0, 2001, 71 * h, policies.StateDisabled},
		{"2,001 consecutive, success 73 h ago", policies.StateDisabled, 0, 0, 2001, 73 * h, policies.StateFrozen},
		{"49,999 consecutive", policies.StateDisabled, 0, 0, 49999, h, policies.StateDisabled},
		{"50,000 consecutive", policies.StateDisabled, 0, 0, 50000, h, policies.StateFrozen},
		{"50,000 consecutive from enabled", policies.StateEnabled, 0, 0, 50000, h, policies.StateFrozen},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEndpoint(t, st, fmt.Sprintf("http://127.0.0.1:1/threshold/%d", i))
			f.counters(t, c.from, c.attempts, c.failures, c.consec, c.lastSuccess)
			env := f.env()
			var status workflows.EndpointStatus
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(workflows.SignalEvaluate, workflows.HealthSignal{Health: policies.WorkfrontHealth})
			}, time.Second)
			env.RegisterDelayedCallback(func() { status = queryState(t, env); env.CancelWorkflow() }, 2*time.Second)
			env.ExecuteWorkflow(workflows.Endpoint, f.input())
			got, changes := f.state(t)
			if got != c.want || status.State != c.want {
				t.Fatalf("store state %s, workflow state %s (%q); want %s", got, status.State, status.Reason, c.want)
			}
			if c.want == c.from {
				if len(changes) != 0 {
					t.Fatalf("changes recorded: %+v", changes)
				}
				return
			}
			if len(changes) != 1 || changes[0].From != c.from || changes[0].To != c.want || changes[0].Reason == "" ||
				changes[0].Reason != status.Reason {
				t.Fatalf("changes = %+v, status reason %q", changes, status.Reason)
			}
		})
	}
}

// workfrontGone is Workfront's breaker with 410 Gone disabling, as custom
// policies have it (docs/policies.md#common-rules).
var workfrontGone = func() policies.Health {
	h := policies.WorkfrontHealth
	h.DisableOnGone = true
	return h
}()

// TestEndpointGoneDisables: a 410 disables the endpoint at once where its
// rules say so.
func TestEndpointGoneDisables(t *testing.T) {
	t.Parallel()
	f := newEndpoint(t, testenv.Store(t), "http://127.0.0.1:1/gone")
	if err := f.st.SetEndpointHealth(context.Background(), store.DefaultAccount, f.id, store.RawJSON(`{"disable_on_gone": true}`)); err != nil {
		t.Fatal(err)
	}
	env := f.env()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalGone, workflows.HealthSignal{DeliveryID: "dlv_x", StatusCode: 410})
	}, time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, 2*time.Second)
	env.ExecuteWorkflow(workflows.Endpoint, f.input())
	got, changes := f.state(t)
	if got != policies.StateDisabled || len(changes) != 1 || changes[0].Reason != "410 Gone from delivery dlv_x" {
		t.Fatalf("state %s, changes %+v", got, changes)
	}
}

// TestEndpointUnfreezeSignal: a frozen endpoint is enabled by the "unfreeze"
// signal without payload (as the CLIs send it), and its counters restart.
func TestEndpointUnfreezeSignal(t *testing.T) {
	t.Parallel()
	f := newEndpoint(t, testenv.Store(t), "http://127.0.0.1:1/frozen")
	f.counters(t, policies.StateFrozen, 0, 0, 60000, 100*time.Hour)
	env := f.env()
	env.RegisterDelayedCallback(func() {
		if s := queryState(t, env); s.State != policies.StateFrozen || !s.NextProbeAt.IsZero() {
			t.Errorf("before unfreeze: %+v", s)
		}
		env.SignalWorkflow(workflows.SignalUnfreeze, nil)
	}, time.Hour) // a frozen endpoint is never probed: nothing happens for an hour
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour+time.Second)
	f.acts.Temporal = testenv.Client(t) // releases the (here no) waiting deliveries
	env.ExecuteWorkflow(workflows.Endpoint, f.input())
	got, changes := f.state(t)
	if got != policies.StateEnabled || len(changes) != 1 || changes[0].Reason != "unfrozen by operator" {
		t.Fatalf("state %s, changes %+v", got, changes)
	}
	e, _ := f.st.EndpointByID(context.Background(), f.id)
	if e.ConsecutiveFailures != 0 || e.CountedSince == nil {
		t.Fatalf("counters not restarted: %+v", e)
	}
}

// TestEndpointContinueAsNew: after MaxSignalsPerRun signals the run continues
// as new, carrying its state, reason, operator flag and next probe.
func TestEndpointContinueAsNew(t *testing.T) {
	t.Parallel()
	f := newEndpoint(t, testenv.Store(t), "http://127.0.0.1:1/can")
	f.counters(t, policies.StateEnabled, 0, 0, 2000, time.Hour)
	env := f.env()
	for i := 1; i <= 3; i++ {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(workflows.SignalEvaluate, workflows.HealthSignal{Health: policies.WorkfrontHealth})
		}, time.Duration(i)*time.Second)
	}
	in := f.input()
	in.MaxSignalsPerRun = 3
	env.ExecuteWorkflow(workflows.Endpoint, in)
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow ended with %v, want continue-as-new", err)
	}
	var next workflows.EndpointInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	if next.State != policies.StateDisabled || next.Reason == "" || next.EndpointID != f.id ||
		next.MaxSignalsPerRun != 3 || next.Health != workfrontGone || next.NextProbeAt.IsZero() {
		t.Fatalf("continued with %+v", next)
	}
	if _, changes := f.state(t); len(changes) != 1 {
		t.Fatalf("changes = %+v, want one", changes)
	}
	// The next run starts from that state and probes when the last one said.
	env2 := f.env()
	env2.RegisterDelayedCallback(func() {
		if s := queryState(t, env2); s.State != policies.StateDisabled || !s.NextProbeAt.Equal(next.NextProbeAt) {
			t.Errorf("second run: %+v", s)
		}
		env2.CancelWorkflow()
	}, time.Second)
	env2.ExecuteWorkflow(workflows.Endpoint, next)
}

// TestEndpointProbeEveryTenMinutes: a disabled endpoint signals "probe" to its
// oldest waiting delivery every 10 minutes, and none before.
func TestEndpointProbeEveryTenMinutes(t *testing.T) {
	t.Parallel()
	f := newEndpoint(t, testenv.Store(t), "http://127.0.0.1:1/probe")
	ctx := context.Background()
	var ids []string
	for i := 0; i < 2; i++ {
		pub, err := f.st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: epEventType, Data: store.RawJSON(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, pub.Deliveries[0].WorkflowID)
		if err := f.st.SetInFlight(ctx, pub.Deliveries[0].ID, "waiting", nil); err != nil {
			t.Fatal(err)
		}
	}
	f.counters(t, policies.StateDisabled, 0, 0, 2000, time.Hour)
	env := f.env()
	var start time.Time
	var probes []time.Duration
	env.OnSignalExternalWorkflow(mock.Anything, ids[0], "", workflows.SignalProbe, mock.Anything).Return(nil).
		Run(func(mock.Arguments) { probes = append(probes, env.Now().Sub(start)) })
	env.RegisterDelayedCallback(func() { start = env.Now().Add(-time.Second) }, time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, 35*time.Minute)
	env.ExecuteWorkflow(workflows.Endpoint, f.input())
	want := []time.Duration{10 * time.Minute, 20 * time.Minute, 30 * time.Minute}
	if fmt.Sprint(probes) != fmt.Sprint(want) {
		t.Fatalf("probes at %v, want %v", probes, want)
	}
}

// TestEndpointProbeSuccessReleases: the time-skipping endpoint workflow sends
// its first probe at 10 minutes; when told the probe succeeded it re-enables
// the endpoint and releases, through the real Temporal server, the real
// Delivery workflows waiting there, which then deliver at once.
func TestEndpointProbeSuccessReleases(t *testing.T) {
	t.Parallel()
	l := newLiveEnv(t)
	recv := newSwitchReceiver(t)
	recv.healthy.Store(true)
	sub := l.subscribe(t, recv.URL+"/release", `{"custom":{"kind":"fixed","interval_seconds":3600},"max_attempts":10}`)
	f := &epFixture{st: l.st, acts: activities.New(l.st, testenv.Logger(), testenv.Egress()), sub: sub, id: sub.EndpointID}
	f.acts.Temporal = testenv.Client(t)
	f.counters(t, policies.StateDisabled, 0, 0, 2000, time.Hour)
	events := []string{l.publish(t, sub), l.publish(t, sub), l.publish(t, sub)}
	eventually(t, "every delivery waiting", func() bool {
		ds, _ := l.st.WaitingDeliveries(context.Background(), sub.EndpointID, store.Waiting{}, 10)
		return len(ds) == len(events)
	})
	env := f.env()
	probed := false
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", workflows.SignalProbe, mock.Anything).Return(nil).
		Run(func(mock.Arguments) {
			probed = true
			env.SignalWorkflow(workflows.SignalProbeResult, workflows.ProbeResult{DeliveryID: "dlv_probe", Success: true, StatusCode: 200})
		})
	env.RegisterDelayedCallback(func() {
		if s := queryState(t, env); s.State != policies.StateEnabled {
			t.Errorf("after the probe: %+v", s)
		}
		env.CancelWorkflow()
	}, 10*time.Minute+time.Second)
	env.ExecuteWorkflow(workflows.Endpoint, f.input())
	if !probed {
		t.Fatal("no probe")
	}
	for _, id := range events {
		eventually(t, "event "+id+" delivered", func() bool { return recv.accepted(id) })
	}
	checkChanges(t, l.st, sub.EndpointID, []string{policies.StateEnabled}, "probe delivery dlv_probe succeeded")
}

// TestWaitingDeliveryTTL: a delivery waiting for a frozen endpoint still ends
// at its own limit, as its policy says: dropped at its TTL (Event Grid,
// dead-lettering off) or queued at the end of its retries' window (SAP, which
// has no TTL). (Workfront's dead letter: TestWorkfrontWaitingDeadline.)
func TestWaitingDeliveryTTL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		policy, retry string
		status        policies.Status
		reason        policies.Stop
	}{
		{policies.NameEventGrid, `{"ttl_seconds":600}`, "dropped", policies.TTLExceeded},
		{policies.NameSAP, "", "queued", policies.RetryWindowExceeded},
	}
	for _, c := range cases {
		t.Run(c.policy, func(t *testing.T) {
			f := newFixture(t, c.policy, c.retry, always(http.StatusOK))
			f.setEndpointState(t, policies.StateFrozen)
			out := f.run(t)
			if out.res.Status != c.status || out.res.Reason != string(c.reason) || f.recv.requests() != 0 {
				t.Fatalf("result %+v after %d requests", out.res, f.recv.requests())
			}
			if d := f.reload(t); d.Status != c.status {
				t.Fatalf("delivery row status %q", d.Status)
			}
		})
	}
}
