package workflows_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

const account = "acct_default"

// eventTypes numbers the event types of fixtures, so that fixtures sharing a
// store each match only their own subscription.
var eventTypes atomic.Int64

// receiver is a real HTTP receiver whose answers follow a script: script(n)
// is the status code of the n-th request (0-based).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	attempts []string // the X-Hookrelay-Attempt header of each request
	script   func(n int) int
	// retryAfter, when set, is the Retry-After header of the n-th answer
	// ("" for none); without it a 429 asks for 2 s.
	retryAfter func(n int) string
}

func newReceiver(t *testing.T, script func(n int) int) *receiver {
	t.Helper()
	r := &receiver{script: script}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		n := len(r.attempts)
		r.attempts = append(r.attempts, req.Header.Get("X-Hookrelay-Attempt"))
		retryAfter := r.retryAfter
		r.mu.Unlock()
		code := r.script(n)
		switch {
		case retryAfter != nil:
			if v := retryAfter(n); v != "" {
				w.Header().Set("Retry-After", v)
			}
		case code == http.StatusTooManyRequests:
			// A 429 asks for 2 s: Retry-After is honoured (issue 16).
			w.Header().Set("Retry-After", "2")
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

// requests returns how many requests the receiver got.
func (r *receiver) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.attempts)
}

// failFirst answers code to the first k requests and 200 after.
func failFirst(k, code int) func(int) int {
	return func(n int) int {
		if n < k {
			return code
		}
		return http.StatusOK
	}
}

// always answers code to every request.
func always(code int) func(int) int { return func(int) int { return code } }

// fixture is one subscription of a real store pointing at a scripted
// receiver, and one delivery of one published event to it.
type fixture struct {
	st        *store.Store
	recv      *receiver
	sub       store.Subscription
	eventType string
	delivery  store.Delivery
	policy    policies.Policy
	// later writes the outcomes of first-attempt successes in the
	// background: run waits for it before anything reads them.
	later *activities.Later
}

// newFixture creates the subscription (policy name plus its retry_policy
// JSON, "" for none), publishes one event and resolves the policy the way
// the starter does.
func newFixture(t *testing.T, policy, retryPolicy string, script func(int) int) *fixture {
	t.Helper()
	return newFixtureOn(t, testenv.Store(t), policy, retryPolicy, script)
}

// newFixtureOn is newFixture on a given store.
func newFixtureOn(t *testing.T, st *store.Store, policy, retryPolicy string, script func(int) int) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{st: st, recv: newReceiver(t, script), eventType: fmt.Sprintf("order.created.%d", eventTypes.Add(1))}
	if retryPolicy == "" {
		retryPolicy = "{}"
	}
	f.sub = store.Subscription{
		AccountID: account, URL: f.recv.URL + "/hook", EventTypes: []string{f.eventType},
		Policy: policy, RetryPolicy: store.RawJSON(retryPolicy), Active: true,
	}
	if err := st.CreateSubscription(ctx, &f.sub); err != nil {
		t.Fatal(err)
	}
	pub, err := st.Publish(ctx, store.Event{AccountID: account, Type: f.eventType, Data: store.RawJSON(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Deliveries) != 1 {
		t.Fatalf("publish made %d deliveries, want 1", len(pub.Deliveries))
	}
	f.delivery = pub.Deliveries[0]
	if f.policy, err = starter.PolicyOf(f.sub); err != nil {
		t.Fatal(err)
	}
	return f
}

// input is the workflow input the starter would build.
func (f *fixture) input() workflows.DeliveryInput {
	return workflows.DeliveryInput{
		DeliveryID: f.delivery.ID, SubscriptionID: f.sub.ID, EndpointID: f.sub.EndpointID,
		EventType: f.eventType, URL: f.sub.URL, Policy: f.policy, Version: workflows.DeliveryVersion,
	}
}

// outcome is what one time-skipping run of the Delivery workflow came to.
type outcome struct {
	res    workflows.DeliveryResult
	timers []time.Duration // every timer the workflow started, in order
	starts []time.Time     // the (skipped-clock) time each Deliver activity started
}

// newEnv is a time-skipping environment with the real workflow and the real
// activities on f's store.
func (f *fixture) newEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(testenv.Logger()))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.RegisterWorkflow(workflows.Delivery)
	acts := activities.New(f.st, testenv.Logger(), testenv.Egress())
	f.later = acts.Later
	env.RegisterActivity(acts)
	return env
}

// run executes the Delivery workflow of f's delivery in the time-skipping
// environment; setup may register delayed callbacks on env first.
func (f *fixture) run(t *testing.T, setup ...func(env *testsuite.TestWorkflowEnvironment)) outcome {
	t.Helper()
	env := f.newEnv()
	var out outcome
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { out.timers = append(out.timers, d) })
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == "Deliver" {
			out.starts = append(out.starts, env.Now())
		}
	})
	// The first attempt is a local activity (delivery_local.go), told from
	// the bookkeeping ones by its input (the test environment names local
	// activities run by name "func1").
	env.SetOnLocalActivityStartedListener(func(_ *activity.Info, _ context.Context, args []any) {
		if _, ok := args[0].(workflows.DeliverInput); ok {
			out.starts = append(out.starts, env.Now())
		}
	})
	for _, s := range setup {
		s(env)
	}
	env.ExecuteWorkflow(workflows.Delivery, f.input())
	f.later.Wait()
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow failed: %v", err)
	}
	if err := env.GetWorkflowResult(&out.res); err != nil {
		t.Fatal(err)
	}
	return out
}

// want is the expected end of a delivery.
type want struct {
	status   policies.Status
	attempts int
	reason   string
	timers   []time.Duration // nil: not checked here
}

// check compares the outcome, the delivery row, its attempt rows and the
// receiver's requests with w.
func (f *fixture) check(t *testing.T, out outcome, w want) {
	t.Helper()
	if out.res.Status != w.status || out.res.Attempts != w.attempts || out.res.Reason != w.reason {
		t.Errorf("result = %+v, want status %q, %d attempts, reason %q", out.res, w.status, w.attempts, w.reason)
	}
	if w.timers != nil && !slices.Equal(out.timers, w.timers) {
		t.Errorf("timers = %v\nwant     %v", out.timers, w.timers)
	}
	if w.timers != nil && len(w.timers) == w.attempts-1 && len(out.starts) == w.attempts {
		if got := startOffsets(out.starts); !slices.Equal(got, cumulative(w.timers)) {
			t.Errorf("attempts made at %v after the first, want %v", got, cumulative(w.timers))
		}
	}
	d := f.reload(t)
	if d.Status != w.status || d.Attempts != w.attempts || d.FinalReason != w.reason || d.FinishedAt == nil {
		t.Errorf("delivery row: status %q, %d attempts, reason %q, finished_at %v; want %q, %d, %q, set",
			d.Status, d.Attempts, d.FinalReason, d.FinishedAt, w.status, w.attempts, w.reason)
	}
	as := f.attempts(t)
	if len(as) != w.attempts || f.recv.requests() != w.attempts {
		t.Fatalf("%d attempt rows, %d requests; want %d", len(as), f.recv.requests(), w.attempts)
	}
	for i, a := range as {
		code := f.recv.script(i)
		if a.Attempt != i || a.StatusCode != code || a.Success != f.policy.IsSuccess(code) {
			t.Errorf("attempt row %d: attempt %d, status %d, success %v; want %d, %d", i, a.Attempt, a.StatusCode, a.Success, i, code)
		}
		if h := f.recv.attempts[i]; h != strconv.Itoa(i+1) {
			t.Errorf("request %d: X-Hookrelay-Attempt %q, want %d", i, h, i+1)
		}
	}
	f.checkDeadLetter(t, out, w)
}

// checkDeadLetter checks that a dead letter exists exactly when the delivery
// was dead-lettered, and that it matches the delivery.
func (f *fixture) checkDeadLetter(t *testing.T, out outcome, w want) {
	t.Helper()
	dls, err := f.st.ListDeadLetters(context.Background(), account, store.DeadLetterFilter{SubscriptionID: f.sub.ID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if w.status != policies.StatusDeadLettered {
		if len(dls) != 0 || out.res.DeadLetterID != "" {
			t.Errorf("%d dead letters for a %s delivery, want none", len(dls), w.status)
		}
		return
	}
	if len(dls) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dls))
	}
	dl := dls[0]
	if dl.ID != out.res.DeadLetterID {
		t.Errorf("dead letter %s, the workflow reported %q", dl.ID, out.res.DeadLetterID)
	}
	last := 0
	if w.attempts > 0 {
		last = f.recv.script(w.attempts - 1)
	}
	if dl.DeliveryID != f.delivery.ID || dl.Reason != w.reason || dl.Attempts != w.attempts || dl.LastStatusCode != last {
		t.Errorf("dead letter %+v does not match the delivery (reason %q, %d attempts)", dl, w.reason, w.attempts)
	}
}

// reopen puts the delivery back as it was before its first run (no
// attempts, no dead letter, pending), so that a second run makes its
// attempts again: an ended delivery's attempts are never sent.
func (f *fixture) reopen(t *testing.T) {
	t.Helper()
	for _, q := range []string{`DELETE FROM dead_letters WHERE delivery_id = $1`, `DELETE FROM attempts WHERE delivery_id = $1`,
		`UPDATE deliveries SET status = 'pending', final_reason = '', finished_at = NULL, next_attempt_at = NULL WHERE id = $1`} {
		if _, err := f.st.DB().ExecContext(context.Background(), q, f.delivery.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// reload reads the delivery row.
func (f *fixture) reload(t *testing.T) store.Delivery {
	t.Helper()
	d, err := f.st.GetDelivery(context.Background(), account, f.delivery.ID)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// attempts reads the attempt rows.
func (f *fixture) attempts(t *testing.T) []store.Attempt {
	t.Helper()
	as, err := f.st.Attempts(context.Background(), f.delivery.ID)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// scheduledOffsets is each attempt's scheduled_at minus the first's, to the
// millisecond (PostgreSQL keeps microseconds).
func (f *fixture) scheduledOffsets(t *testing.T) []time.Duration {
	t.Helper()
	as := f.attempts(t)
	out := make([]time.Duration, len(as))
	for i, a := range as {
		out[i] = a.ScheduledAt.Sub(as[0].ScheduledAt).Round(time.Millisecond)
	}
	return out
}

// active reports whether the subscription is active.
func (f *fixture) active(t *testing.T) bool {
	t.Helper()
	sub, err := f.st.GetSubscription(context.Background(), account, f.sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	return sub.Active
}

// setEndpointState sets the endpoint's circuit state directly in PostgreSQL.
func (f *fixture) setEndpointState(t *testing.T, state string) {
	t.Helper()
	_, err := f.st.DB().Exec(`UPDATE endpoints SET state = $2 WHERE id = $1`, f.sub.EndpointID, state)
	if err != nil {
		t.Fatal(err)
	}
}

// holdSlot caps f's endpoint at one attempt at a time and has another
// holder take that slot for d: f's first attempt is held back until then.
func (f *fixture) holdSlot(t *testing.T, d time.Duration) {
	t.Helper()
	_, err := f.st.DB().Exec(`UPDATE endpoints SET max_concurrency = 1 WHERE id = $1;`, f.sub.EndpointID)
	if err == nil {
		_, err = f.st.DB().Exec(`INSERT INTO endpoint_leases (endpoint_id, holder, expires_at)
			VALUES ($1, 'someone-else', clock_timestamp() + make_interval(secs => $2))`, f.sub.EndpointID, d.Seconds())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// testStore is a migrated store on a fresh database, for subtests to share.
func testStore(t *testing.T) *store.Store { t.Helper(); return testenv.Store(t) }

// failFirstRetryingUpdate makes PostgreSQL reject the first update of f's
// deliveries to status retrying (a sequence, so the rollback keeps count).
func failFirstRetryingUpdate(t *testing.T, f *fixture) {
	t.Helper()
	_, err := f.st.DB().Exec(`CREATE SEQUENCE test_fail_once;
		CREATE FUNCTION test_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.status = 'retrying' AND nextval('test_fail_once') = 1 THEN
				RAISE EXCEPTION 'injected failure';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER test_fail_once BEFORE UPDATE ON deliveries
			FOR EACH ROW EXECUTE FUNCTION test_fail_once();`)
	if err != nil {
		t.Fatal(err)
	}
}
