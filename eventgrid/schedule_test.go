package eventgrid_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// skipRun is one time-skipping run of the real Delivery workflow with the
// real activities on a real store, for one event to one subscription.
type skipRun struct {
	res      workflows.DeliveryResult
	timers   []time.Duration
	delivery store.Delivery
	policy   policies.Policy
}

// runSub publishes one event of type typ and runs its delivery to sub.
func runSub(t *testing.T, st *store.Store, sub store.Subscription, typ string, d policies.EdgeDefaults) skipRun {
	t.Helper()
	ctx := context.Background()
	pub, err := st.Publish(ctx, store.Event{AccountID: "acct_default", Type: typ, Subject: "/orders/1", Data: store.RawJSON(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	var out skipRun
	for _, dl := range pub.Deliveries {
		if dl.SubscriptionID == sub.ID {
			out.delivery = dl
		}
	}
	if out.policy, err = starter.PolicyWith(sub, d); err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(testenv.Logger()))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.RegisterWorkflow(workflows.Delivery)
	env.RegisterActivity(activities.New(st, testenv.Logger(), testenv.Egress()))
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { out.timers = append(out.timers, d) })
	env.ExecuteWorkflow(workflows.Delivery, workflows.DeliveryInput{DeliveryID: out.delivery.ID,
		SubscriptionID: sub.ID, EndpointID: sub.EndpointID, EventType: typ, URL: sub.URL, Policy: out.policy})
	if err := env.GetWorkflowError(); err != nil || !env.IsWorkflowCompleted() {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), err)
	}
	if err := env.GetWorkflowResult(&out.res); err != nil {
		t.Fatal(err)
	}
	return out
}

// expect checks the result and the delivery row.
func (r skipRun) expect(t *testing.T, st *store.Store, status policies.Status, attempts int, reason string) {
	t.Helper()
	if r.res.Status != status || r.res.Attempts != attempts || r.res.Reason != reason {
		t.Errorf("result %+v; want %s, %d attempts, %q", r.res, status, attempts, reason)
	}
	d, err := st.GetDelivery(context.Background(), "acct_default", r.delivery.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != status || d.Attempts != attempts || d.FinalReason != reason {
		t.Errorf("delivery row %s, %d attempts, %q; want %s, %d, %q", d.Status, d.Attempts, d.FinalReason, status, attempts, reason)
	}
}

func TestEventGridScheduleWithJitterBounds(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	recv := newReceiver(t, always(http.StatusInternalServerError))
	h := apiServer(t, st, nil, policies.EdgeDefaults{})
	sub := putSub(t, st, h, "jitter", "", `{`+webhook(recv.URL, `,"hookrelayPreValidated":true`)+`,
		"filter":{"includedEventTypes":["order.created"]},"retryPolicy":{"maxDeliveryAttempts":9}}`)
	r := runSub(t, st, sub, "order.created", policies.EdgeDefaults{})
	r.expect(t, st, policies.StatusDropped, 9, string(policies.MaxAttemptsExceeded))
	base := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute,
		10 * time.Minute, 30 * time.Minute, time.Hour, time.Hour}
	if len(r.timers) != len(base) {
		t.Fatalf("timers %v; want %d", r.timers, len(base))
	}
	jittered := 0
	for i, d := range r.timers {
		lo, hi := r.policy.JitterBounds(base[i])
		if d < lo || d > hi {
			t.Errorf("wait %d = %v, outside [%v, %v]", i+1, d, lo, hi)
		}
		if d != base[i] {
			jittered++
		}
	}
	if jittered == 0 {
		t.Errorf("no wait was jittered: %v", r.timers)
	}
	reqs := recv.requests()
	for i, q := range reqs {
		if q.Header.Get("aeg-delivery-count") != itoa(i) || q.Header.Get("aeg-event-type") != "Notification" ||
			q.Header.Get("aeg-subscription-name") != "jitter" {
			t.Errorf("request %d headers %v", i, q.Header)
		}
		if len(q.Events) != 1 || q.Events[0]["eventType"] != "order.created" || q.Events[0]["subject"] != "/orders/1" {
			t.Errorf("request %d body %v; want one Event Grid event", i, q.Events)
		}
	}
}

func TestEventGridLimits(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	h := apiServer(t, st, nil, policies.EdgeDefaults{})
	t.Run("max attempts first", func(t *testing.T) {
		recv := newReceiver(t, always(http.StatusServiceUnavailable))
		sub := putSub(t, st, h, "attempts", "", `{`+webhook(recv.URL, `,"hookrelayPreValidated":true`)+`,
			"filter":{"includedEventTypes":["a.first"]},"retryPolicy":{"maxDeliveryAttempts":3,"eventTimeToLiveInMinutes":1440}}`)
		r := runSub(t, st, sub, "a.first", policies.EdgeDefaults{})
		r.expect(t, st, policies.StatusDropped, 3, string(policies.MaxAttemptsExceeded))
		if _, err := st.DeadLetterOf(context.Background(), r.delivery.ID); err == nil {
			t.Error("dead letter made with dead-lettering off")
		}
	})
	t.Run("time to live first", func(t *testing.T) {
		recv := newReceiver(t, always(http.StatusInternalServerError))
		sub := putSub(t, st, h, "ttl", "", `{`+webhook(recv.URL, `,"hookrelayPreValidated":true`)+`,
			"filter":{"includedEventTypes":["t.first"]},"retryPolicy":{"maxDeliveryAttempts":30,"eventTimeToLiveInMinutes":5},
			"deadLetterDestination":{"endpointType":"Hookrelay","properties":{"raiseEvent":true}}}`)
		r := runSub(t, st, sub, "t.first", policies.EdgeDefaults{})
		r.expect(t, st, policies.StatusDeadLettered, 4, string(policies.TTLExceeded))
		l, err := st.DeadLetterOf(context.Background(), r.delivery.ID)
		if err != nil || l.Reason != string(policies.TTLExceeded) || l.LastStatusCode != 500 {
			t.Fatalf("dead letter %+v, %v", l, err)
		}
		ev, err := st.GetEvent(context.Background(), "acct_default", "deadletter-"+l.ID)
		if err != nil || ev.Event.Type != activities.DeadLetteredEventType {
			t.Fatalf("hookrelay.deadlettered event: %+v, %v", ev.Event, err)
		}
	})
}

func TestEventGridUndeliverableAtOnce(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	h := apiServer(t, st, nil, policies.EdgeDefaults{})
	for _, code := range []int{400, 413} {
		recv := newReceiver(t, always(code))
		name, typ := "undeliverable-"+itoa(code), "u."+itoa(code)
		sub := putSub(t, st, h, name, "", `{`+webhook(recv.URL, `,"hookrelayPreValidated":true`)+`,
			"filter":{"includedEventTypes":["`+typ+`"]},"deadLetterDestination":{"endpointType":"StorageBlob"}}`)
		r := runSub(t, st, sub, typ, policies.EdgeDefaults{})
		reason := "Undeliverable: HTTP " + itoa(code)
		r.expect(t, st, policies.StatusDeadLettered, 1, reason)
		l, err := st.DeadLetterOf(context.Background(), r.delivery.ID)
		if err != nil || l.LastStatusCode != code || l.Reason != reason {
			t.Errorf("dead letter %+v, %v", l, err)
		}
		if len(r.timers) != 0 {
			t.Errorf("retried after %d: timers %v", code, r.timers)
		}
	}
}

func TestEdgeOneThenTenMinutes(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	recv := newReceiver(t, always(http.StatusInternalServerError))
	h := apiServer(t, st, nil, policies.EdgeDefaults{})
	sub := putSub(t, st, h, "edge-waits", "?mode=edge", `{`+webhook(recv.URL, `,"eventDeliverySchema":"cloudeventschemav1_0"`)+`,
		"retryPolicy":{"maxDeliveryAttempts":4}}`)
	r := runSub(t, st, sub, "edge.any", policies.EdgeDefaults{})
	r.expect(t, st, policies.StatusDeadLettered, 4, string(policies.MaxAttemptsExceeded))
	want := []time.Duration{time.Minute, 10 * time.Minute, 10 * time.Minute}
	if len(r.timers) != len(want) || r.timers[0] != want[0] || r.timers[1] != want[1] || r.timers[2] != want[2] {
		t.Errorf("timers %v; want %v", r.timers, want)
	}
	reqs := recv.requests()
	if len(reqs) != 4 || len(reqs[0].Events) != 1 || reqs[0].Events[0]["specversion"] != "1.0" ||
		reqs[0].Header.Get("Content-Type") != "application/cloudevents-batch+json; charset=utf-8" {
		t.Errorf("requests %+v; want 4 CloudEvents arrays of one", reqs)
	}
}

func TestEdgeDefaultsFromEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{config.EnvEdgeMaxDeliveryAttempts: "5", config.EnvEdgeEventTTLSeconds: "1800"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.EdgeDefaults
	st := testenv.Store(t)
	h := apiServer(t, st, nil, d)
	cases := []struct {
		name, retry, reason string
		attempts            int
	}{
		{"env-only", ``, string(policies.TTLExceeded), 4}, // 0, 1, 11, 21 min; 31 > 30
		{"own-attempts", `,"retryPolicy":{"maxDeliveryAttempts":2}`, string(policies.MaxAttemptsExceeded), 2},
		{"own-ttl", `,"retryPolicy":{"eventExpiryInMinutes":60}`, string(policies.MaxAttemptsExceeded), 5},
	}
	for _, c := range cases {
		recv := newReceiver(t, always(http.StatusInternalServerError))
		sub := putSub(t, st, h, c.name, "?mode=edge", `{`+webhook(recv.URL, "")+`,"filter":{"includedEventTypes":["`+c.name+`"]}`+c.retry+`}`)
		r := runSub(t, st, sub, c.name, d)
		r.expect(t, st, policies.StatusDeadLettered, c.attempts, c.reason)
	}
}

func TestEdgeDefaultsInvalid(t *testing.T) {
	t.Parallel()
	for _, bad := range []map[string]string{
		{config.EnvEdgeMaxDeliveryAttempts: "abc"}, {config.EnvEdgeMaxDeliveryAttempts: "31"},
		{config.EnvEdgeEventTTLSeconds: "59"}, {config.EnvEdgeEventTTLSeconds: "0"},
	} {
		if _, err := config.Load(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("config.Load(%v) = nil error", bad)
		}
	}
}
