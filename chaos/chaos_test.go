package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/bench/results"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/testenv"
)

// scenario is one run: a fault midway through a steady publish, against a
// receiver behaviour.
type scenario struct {
	name, fault, behaviour string
	events                 int
	rate                   float64 // events per second
}

// result is what a scenario's reconciliation found.
type result struct {
	scenario
	Tally
	odd []string // the rows of deliveries a crash left a row unknown of, when rows ≠ requests
}

func (r result) String() string {
	return fmt.Sprintf("| %s | %s | %s | %d | %d | %d | %d | %d | %d | %d (%d unknown, %d cut) | %d | %.1f s |",
		r.name, r.fault, r.behaviour, r.Published, r.Statuses[policies.StatusDelivered],
		r.Statuses[policies.StatusDeadLettered], r.Lost, r.Stuck, r.Duplicates, r.Rows, r.Unknown, r.Cut, r.Requests,
		r.Settle.Seconds())
}

// TestChaos runs the scenarios: the short ones in `make test`, all of them
// under HOOKRELAY_CHAOS=full (`make chaos`). Every scenario must lose
// nothing, leave nothing stuck, and have one attempts row per request the
// receiver saw; the ordered ones (ordered_test.go) also deliver every event
// of each key in publication order, none attempted before the one before it
// ended.
func TestChaos(t *testing.T) {
	scenarios, ordered := []scenario{{"short", "kill-worker", "ok", 40, 10}}, orderedShort
	if os.Getenv("HOOKRELAY_CHAOS") == "full" {
		scenarios, ordered = fullScenarios, orderedFull
	}
	if only := os.Getenv("HOOKRELAY_CHAOS_ONLY"); only != "" {
		scenarios = slices.DeleteFunc(slices.Clone(fullScenarios), func(sc scenario) bool { return !strings.Contains(only, sc.name) })
		ordered = slices.DeleteFunc(slices.Concat(orderedShort, orderedFull), func(sc orderedScenario) bool { return !strings.Contains(only, sc.name) })
	}
	s := startStack(t)
	rcv := NewReceiver()
	t.Cleanup(rcv.Close)
	fmt.Println("| scenario | fault | receiver | published | delivered | dead-lettered | lost | stuck | duplicates | attempt rows | requests | settle |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	out := results.Open(results.SuiteChaos)
	for _, sc := range scenarios {
		r := s.run1(rcv, sc)
		printResult(r)
		checkResult(t, r)
		record(t, out, r, nil)
	}
	for _, sc := range ordered {
		r, problems := s.runOrdered(sc)
		printResult(r)
		checkResult(t, r)
		if len(problems) > 0 {
			t.Errorf("%s: out of order or lost:\n%s", sc.name, strings.Join(problems, "\n"))
		}
		record(t, out, r, problems)
	}
}

// record writes a scenario's line to the run's data file (when
// HOOKRELAY_RESULTS names one; RELIABILITY.md's table is made from it):
// its tally, whether it passed, its fault and receiver.
func record(t *testing.T, out *results.Writer, r result, problems []string) {
	t.Helper()
	figures := r.Tally.Figures()
	figures["events"], figures["passed"] = float64(r.events), 0
	if r.passed() && len(problems) == 0 {
		figures["passed"] = 1
	}
	if err := out.Add(r.name, figures, map[string]string{"fault": r.fault, "receiver": r.behaviour}); err != nil {
		t.Errorf("writing the results: %v", err)
	}
}

// printResult prints a scenario's row, then how its deliveries that were
// not delivered ended.
func printResult(r result) {
	fmt.Println(r)
	for reason, n := range r.Reasons {
		fmt.Printf("|   | %d ended: %.200s |\n", n, reason)
	}
	for _, line := range r.odd {
		fmt.Printf("|   | %s |\n", line)
	}
	for _, line := range r.Unmatched {
		fmt.Printf("|   | unmatched: %s |\n", line)
	}
}

// checkResult fails the test when a scenario lost or left stuck anything,
// or has attempts rows other than one per request the receiver saw and
// those a fault cut off.
func checkResult(t *testing.T, r result) {
	t.Helper()
	if !r.passed() {
		t.Errorf("%s: %d of %d published, %d lost, %d stuck, %d attempt rows (%d cut by a fault) for %d requests, %d deliveries unmatched",
			r.name, r.Published, r.events, r.Lost, r.Stuck, r.Rows, r.Cut, r.Requests, len(r.Unmatched))
	}
}

// passed says whether the scenario lost nothing, left nothing stuck, and
// has one attempts row per request the receiver saw and those a fault cut
// off.
func (r result) passed() bool {
	return r.Lost == 0 && r.Stuck == 0 && r.Rows == r.Requests+r.Cut && len(r.Unmatched) == 0 && r.Published == r.events
}

var fullScenarios = []scenario{
	{"baseline", "none", "ok", 150, 15},
	{"kill-worker", "kill-worker", "ok", 150, 15},
	{"kill-api", "kill-api", "ok", 150, 15},
	{"kill-temporal", "kill-temporal", "ok", 150, 15},
	{"restart-postgres", "restart-postgres", "ok", 150, 15},
	{"all-together", "all-together", "ok", 150, 15},
	{"flaky-receiver", "none", "flaky", 500, 15},
	{"hanging-receiver", "kill-worker", "hang", 60, 15},
}

// run1 subscribes the receiver, publishes the scenario's events with the
// fault midway, waits for every delivery to end and reconciles.
func (s *stack) run1(rcv *Receiver, sc scenario) result {
	typ := "chaos." + sc.name
	subID := s.mustPost("/v1/subscriptions", Subscription(rcv.URL, sc.name, sc.behaviour, typ))
	var fault sync.WaitGroup
	var marks Faults
	var keys []string
	begin := time.Now()
	for i := range sc.events {
		time.Sleep(time.Until(begin.Add(time.Duration(float64(i) / sc.rate * float64(time.Second)))))
		if i == sc.events/2 && sc.fault != "none" {
			marks.Mark()
			fault.Go(func() { faults[sc.fault](s) })
		}
		key := fmt.Sprintf("%s-%d", sc.name, i)
		if s.publish(key, typ) {
			keys = append(keys, key)
		}
	}
	fault.Wait()
	published := time.Now()
	r := result{scenario: sc, Tally: Tally{Published: len(keys)}}
	r.Stuck = Settle(s.st.DB(), subID, 3*time.Minute)
	r.Settle = time.Since(published)
	if err := Reconcile(s.st.DB(), subID, keys, &r.Tally); err != nil {
		s.t.Fatal(err)
	}
	r.Requests, r.Duplicates = rcv.Counts(sc.name)
	if err := Match(s.st.DB(), subID, rcv.Seen, &marks, &r.Tally); err != nil {
		s.t.Fatal(err)
	}
	if r.Rows != r.Requests {
		r.odd, _ = oddRows(s.st.DB(), subID, rcv.Seen)
	}
	return r
}

// publish publishes one event with an Idempotency-Key, retrying (as a
// client should) until it is accepted or a minute has passed.
func (s *stack) publish(key, typ string) bool {
	code, _, err := testenv.Post(s.api+"/v1/events", key, `{"type": "`+typ+`", "data": {}}`)
	return err == nil && code < 300
}

// mustPost POSTs body and returns the answer's id.
func (s *stack) mustPost(path, body string) string {
	code, b, err := testenv.Post(s.api+path, "", body)
	var out struct{ ID string }
	if err != nil || code >= 300 || json.Unmarshal(b, &out) != nil {
		s.t.Fatalf("POST %s: %d %s (%v)", path, code, b, err)
	}
	return out.ID
}
