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

	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// attemptTimeout is the scenarios' per-attempt timeout.
const attemptTimeout = 2 * time.Second

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
	published, lost, stuck, duplicates int
	statuses                           map[policies.Status]int
	rows, unknown, requests            int
	reasons                            map[string]int // of the deliveries not delivered
	settle                             time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("| %s | %s | %s | %d | %d | %d | %d | %d | %d | %d (%d unknown) | %d | %.1f s |",
		r.name, r.fault, r.behaviour, r.published, r.statuses[policies.StatusDelivered],
		r.statuses[policies.StatusDeadLettered], r.lost, r.stuck, r.duplicates, r.rows, r.unknown, r.requests, r.settle.Seconds())
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
	rcv := newReceiver(t)
	fmt.Println("| scenario | fault | receiver | published | delivered | dead-lettered | lost | stuck | duplicates | attempt rows | requests | settle |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, sc := range scenarios {
		r := s.run1(rcv, sc)
		fmt.Println(r)
		for reason, n := range r.reasons {
			fmt.Printf("|   | %d ended: %.120s |\n", n, reason)
		}
		checkResult(t, r)
	}
	for _, sc := range ordered {
		r, problems := s.runOrdered(sc)
		fmt.Println(r)
		checkResult(t, r)
		if len(problems) > 0 {
			t.Errorf("%s: out of order or lost:\n%s", sc.name, strings.Join(problems, "\n"))
		}
	}
}

// checkResult fails the test when a scenario lost or left stuck anything,
// or has an attempts row for other than each request the receiver saw.
func checkResult(t *testing.T, r result) {
	t.Helper()
	if r.lost != 0 || r.stuck != 0 || r.rows != r.requests || r.published != r.events {
		t.Errorf("%s: %d of %d published, %d lost, %d stuck, %d attempt rows for %d requests",
			r.name, r.published, r.events, r.lost, r.stuck, r.rows, r.requests)
	}
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
func (s *stack) run1(rcv *receiver, sc scenario) result {
	typ := "chaos." + sc.name
	body := fmt.Sprintf(`{"url": %q, "event_types": [%q], "policy": "custom", "retry_policy":
		{"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 30, "timeout_seconds": %d, "dead_lettering": true}}`,
		rcv.URL+"/"+sc.name+"/"+sc.behaviour, typ, int(attemptTimeout.Seconds()))
	subID := s.mustPost("/v1/subscriptions", body)
	var fault sync.WaitGroup
	var keys []string
	begin := time.Now()
	for i := range sc.events {
		time.Sleep(time.Until(begin.Add(time.Duration(float64(i) / sc.rate * float64(time.Second)))))
		if i == sc.events/2 {
			fault.Go(func() { faults[sc.fault](s) })
		}
		key := fmt.Sprintf("%s-%d", sc.name, i)
		if s.publish(key, typ) {
			keys = append(keys, key)
		}
	}
	fault.Wait()
	published := time.Now()
	r := result{scenario: sc, published: len(keys)}
	r.stuck = s.settle(subID, 3*time.Minute)
	r.settle = time.Since(published)
	s.reconcile(&r, subID, keys)
	r.requests, r.duplicates = rcv.counts(sc.name)
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

// settle waits until every delivery of the subscription has ended, and
// returns how many had not after limit.
func (s *stack) settle(subID string, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		var open int
		err := s.st.DB().Get(&open, `SELECT count(*) FROM deliveries WHERE subscription_id = $1
			AND status NOT IN `+policies.SQLList(policies.FinalStatuses), subID)
		if err == nil && open == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			return open
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// reconcile counts the accepted events that were not stored (lost), the
// deliveries by status, and the attempts rows.
func (s *stack) reconcile(r *result, subID string, keys []string) {
	db := s.st.DB()
	err := db.Get(&r.lost, `SELECT count(*) FROM unnest($1::text[]) k WHERE NOT EXISTS
		(SELECT 1 FROM events e JOIN deliveries d ON d.event_id = e.id AND d.subscription_id = $3
		 WHERE e.account_id = $2 AND e.external_id = k)`, pq.Array(keys), store.DefaultAccount, subID)
	if err != nil {
		s.t.Fatal(err)
	}
	var rows []struct {
		Status policies.Status `db:"status"`
		N      int             `db:"n"`
	}
	if err := db.Select(&rows, `SELECT status, count(*) AS n FROM deliveries WHERE subscription_id = $1
		GROUP BY status`, subID); err != nil {
		s.t.Fatal(err)
	}
	r.statuses = map[policies.Status]int{}
	for _, row := range rows {
		r.statuses[row.Status] = row.N
	}
	var ends []struct {
		Reason string `db:"final_reason"`
		N      int    `db:"n"`
	}
	if err := db.Select(&ends, `SELECT final_reason, count(*) AS n FROM deliveries WHERE subscription_id = $1
		AND status <> 'delivered' GROUP BY final_reason`, subID); err != nil {
		s.t.Fatal(err)
	}
	r.reasons = map[string]int{}
	for _, e := range ends {
		r.reasons[e.Reason] = e.N
	}
	err = db.QueryRowx(`SELECT count(*), count(*) FILTER (WHERE a.error_kind = $2) FROM attempts a
		JOIN deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = $1`, subID, store.KindUnknown).
		Scan(&r.rows, &r.unknown)
	if err != nil {
		s.t.Fatal(err)
	}
}
