package chaos

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hookrelay/hookrelay/testenv"
)

// orderedScenario is a run of ordered delivery (issue 26): events over
// keys ordering keys, published one key after the other in turn at rate a
// second, to one ordered subscription whose receiver fails 20% of requests
// at random, with faults spread evenly over the publish.
type orderedScenario struct {
	name         string
	faults       []string
	keys, perKey int
	rate         float64
}

// orderedShort runs in `make test`; orderedFull under HOOKRELAY_CHAOS=full.
// A PostgreSQL restart is not among them (`restart-postgres` runs it,
// unordered).
var (
	orderedShort = []orderedScenario{{"ordered-short", []string{"kill-worker"}, 4, 25, 25}}
	orderedFull  = []orderedScenario{
		{"ordered-kill-worker", []string{"kill-worker", "kill-worker"}, 10, 100, 50},
		{"ordered-kill-temporal", []string{"kill-temporal"}, 10, 100, 50},
	}
)

// orderedRetries retries every 200 ms, 100 times: no event runs out of
// attempts in a run, so each must end delivered.
const orderedRetries = `{"custom": {"kind": "fixed", "interval_seconds": 0.2}, "max_attempts": 100, "timeout_seconds": 2}`

// runOrdered subscribes a testenv.OrderedReceiver in order, publishes the
// scenario's events with its faults, waits for every delivery to end and
// reconciles; it returns what the receiver saw out of order, and each
// key's events never answered 200.
func (s *stack) runOrdered(sc orderedScenario) (result, []string) {
	rcv := testenv.NewOrderedReceiver(s.t, 0.2)
	typ := "chaos." + sc.name
	subID := s.mustPost("/v1/subscriptions", fmt.Sprintf(`{"url": %q, "event_types": [%q], "ordered": true,
		"policy": "custom", "retry_policy": %s}`, rcv.URL+"/"+sc.name, typ, orderedRetries))
	total := sc.keys * sc.perKey
	var fault sync.WaitGroup
	var marks Faults
	var ids []string
	begin, next := time.Now(), 0
	for i := range total {
		time.Sleep(time.Until(begin.Add(time.Duration(float64(i) / sc.rate * float64(time.Second)))))
		if next < len(sc.faults) && i == (next+1)*total/(len(sc.faults)+1) {
			fault.Wait()
			f := sc.faults[next]
			marks.Mark()
			fault.Go(func() { faults[f](s) })
			next++
		}
		id := fmt.Sprintf("%s-%d", sc.name, i)
		if s.publishOrdered(id, typ, fmt.Sprintf("k%d", i%sc.keys), i/sc.keys) {
			ids = append(ids, id)
		}
	}
	fault.Wait()
	published := time.Now()
	r := result{scenario: scenario{sc.name, strings.Join(sc.faults, "+"), "ordered 20% 500s", total, sc.rate},
		Tally: Tally{Published: len(ids)}}
	r.Stuck = Settle(s.st.DB(), subID, 5*time.Minute)
	r.Settle = time.Since(published)
	if err := Reconcile(s.st.DB(), subID, ids, &r.Tally); err != nil {
		s.t.Fatal(err)
	}
	r.Requests = rcv.Requests()
	if err := Match(s.st.DB(), subID, rcv.Seen, &marks, &r.Tally); err != nil {
		s.t.Fatal(err)
	}
	if r.Rows != r.Requests {
		r.odd, _ = oddRows(s.st.DB(), subID, rcv.Seen)
	}
	problems := rcv.Violations()
	for k := range sc.keys {
		got, dup := rcv.Delivered(fmt.Sprintf("k%d", k))
		r.Duplicates += dup
		if got != sc.perKey {
			problems = append(problems, fmt.Sprintf("key k%d: %d of %d events answered 200", k, got, sc.perKey))
		}
	}
	return r, problems
}

// publishOrdered publishes event n of key, as publish does.
func (s *stack) publishOrdered(id, typ, key string, n int) bool {
	code, _, err := testenv.Post(s.api+"/v1/events", id,
		fmt.Sprintf(`{"type": %q, "ordering_key": %q, "data": {"key": %q, "n": %d}}`, typ, key, key, n))
	return err == nil && code < 300
}
