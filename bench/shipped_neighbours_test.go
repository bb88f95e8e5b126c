package bench

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The noisy-neighbour phase (docs/endpoints.md#isolation): a healthy
// endpoint receives neighbourRate events a second for shippedPacedFor,
// alone, then beside another endpoint in each neighbourScenario. Each
// scenario's other endpoint has a subscription of its own under a custom
// policy retrying every 5 s with no circuit breaker, so that its deliveries
// stay on their retry timers. HOOKRELAY_BENCH_NEIGHBOURS (letters, as "ace")
// runs only the scenarios it names.
const (
	neighbourRate = 20
	// neighbourPolicy allows 100 attempts (the most a custom policy takes):
	// with the default 10, deliveries made early in a burst that fails for
	// a minute end dead-lettered before the receiver answers again.
	neighbourPolicy = `"policy":"custom","retry_policy":{"custom":{"kind":"fixed","interval_seconds":5},"max_attempts":100}`
	// neighbourWaiting keeps the deliveries of a receiver that is down on
	// their timers for eight minutes after each failure: longer than making
	// all of (e)'s first attempts and the healthy phase after them take, so
	// that the healthy endpoint runs beside deliveries waiting on their
	// timers, as (e) says, not beside their retries, which (d) measures.
	neighbourWaiting = `"policy":"custom","retry_policy":{"custom":{"kind":"fixed","interval_seconds":480}}`
	neighbourDrain   = 15 * time.Minute
	// neverCuts is how many of (b)'s requests are cut at their timeout
	// before its receiver answers again (the first 16 go out at once).
	neverCuts = 16
)

// neighbourScenario is one way the other endpoint misbehaves: how its
// receiver answers, how many events it gets, and whether the healthy
// endpoint's phase starts once they are all published (else beside their
// publication).
type neighbourScenario struct {
	name        string
	mode        int32
	hold        time.Duration
	events      int
	publishedBy bool
	// saturating scenarios are held to the 100 ms line, the others to 2×
	// alone and 50 ms (issue 51).
	saturating bool
	// policy is the subscription's policy JSON; "" is neighbourPolicy.
	policy string
}

var neighbourScenarios = []neighbourScenario{
	{name: "a-held-25s", mode: answerHeld, hold: 25 * time.Second, events: 600},
	{name: "b-never-answers", mode: answerNever, events: 2000},
	{name: "c-burst-200", mode: answerAtOnce, events: 3000, saturating: true},
	{name: "d-burst-503", mode: answer503, events: 3000, saturating: true},
	{name: "e-down-10000", mode: answerDown, events: 10000, publishedBy: true, policy: neighbourWaiting},
}

// neighbours runs the noisy-neighbour phase.
func (r *shippedRun) neighbours() {
	subscribeJSON(r.b, r.dev.api, fmt.Sprintf(`{"url":%q,"event_types":["nb-healthy"],"policy":"eventgrid"}`,
		r.rcv.url+"/healthy"))
	alone := r.healthy("alone", false)
	for _, sc := range neighbourScenarios {
		if sc.wanted() {
			r.neighbour(sc, alone)
		}
	}
}

// wanted says whether HOOKRELAY_BENCH_NEIGHBOURS (letters; empty: all) names
// the scenario.
func (sc neighbourScenario) wanted() bool {
	only := os.Getenv("HOOKRELAY_BENCH_NEIGHBOURS")
	return only == "" || strings.Contains(only, sc.name[:1])
}

// healthy runs the healthy endpoint's load once, as phase "healthy <tag>":
// alone once our processes are idle, beside the other endpoint at once
// (while its burst is being published, its requests are held, or its
// deliveries wait on their timers), never after it settled.
func (r *shippedRun) healthy(tag string, beside bool) phaseResult {
	p := publisher{api: r.dev.api, typ: "nb-healthy", prefix: "nb-" + tag, paths: []string{"/healthy"}}
	return r.healthyLoad("healthy "+tag, p.send, beside, shippedPacedFor+3*time.Minute)
}

// healthyLoad runs neighbourRate publications a second by send for
// shippedPacedFor as phase name, waiting limit for their receipts: beside
// the other endpoint at once, or alone once our processes are idle.
func (r *shippedRun) healthyLoad(name string, send sendFunc, beside bool, limit time.Duration) phaseResult {
	run := func() []shot { return openLoop(neighbourRate, shippedPacedFor, send) }
	if beside {
		return r.phaseAfter("beside the other endpoint at once", name, limit, run)
	}
	return r.phase(name, limit, run)
}

// neighbour runs one scenario beside the healthy endpoint's load, then lets
// the other endpoint answer at once and waits for its events to drain.
func (r *shippedRun) neighbour(sc neighbourScenario, alone phaseResult) {
	rcv := newNoisyReceiver(r.b, sc.mode, sc.hold)
	typ := "nb-" + sc.name
	policy := sc.policy
	if policy == "" {
		policy = neighbourPolicy
	}
	subID := subscribeJSON(r.b, r.dev.api, fmt.Sprintf(`{"url":%q,"event_types":[%q],%s}`, rcv.url+"/noisy", typ, policy))
	p := publisher{api: r.dev.api, typ: typ, prefix: typ, paths: []string{"/noisy"}}
	onTimers := func() { waitRetrying(r.b, r.dev.pgURL, subID, sc.events, neighbourDrain) }
	beside, o := misbehave(sc, rcv, p.send, onTimers, func() phaseResult { return r.healthy("beside "+sc.name, true) })
	if sc.mode == answerHeld {
		held := heldDeliveries(r.b, r.dev.pgURL, subID, sc.events-o.errors, sc.hold)
		o.held = &held
	}
	r.reportNeighbour(sc, alone, beside, o)
}

// misbehave runs scenario sc's other endpoint, whose receiver is rcv and
// whose events send publishes, beside the healthy load (healthy), then has
// rcv answer at once and waits for every event to drain. A scenario whose
// events are all published first waits for each first attempt, then for
// onTimers (each delivery on its retry timer), when given.
func misbehave(sc neighbourScenario, rcv *noisyReceiver, send sendFunc, onTimers func(), healthy func() phaseResult) (phaseResult, neighbourOther) {
	var wg sync.WaitGroup
	var shots []shot
	var published time.Duration
	began := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		shots = closedLoop(sc.events, shippedPublishers*4, send)
		published = time.Since(began)
	}()
	if sc.publishedBy {
		wg.Wait()
		rcv.waitRequests(sc.events, neighbourDrain) // every first attempt failed
		if onTimers != nil {
			onTimers()
		}
	}
	beside := healthy()
	wg.Wait()
	switch sc.mode {
	case answerNever:
		// The first requests are cut at their timeout, after the
		// healthy phase: the receiver stays silent until then.
		rcv.waitCuts(neverCuts, neighbourDrain)
	case answerHeld:
		// Every event's request is held, not only those sent during
		// the healthy phase.
		rcv.waitRequests(sc.events, neighbourDrain)
	}
	errs := 0
	for _, s := range shots {
		if s.err != nil {
			errs++
		}
	}
	requests, _, repeated, cutMin, cutMax := rcv.counts()
	rcv.mode.Store(answerAtOnce)
	drain, ok := rcv.waitDelivered(sc.events-errs, neighbourDrain)
	o := neighbourOther{requests: requests, repeated: repeated, cutMin: cutMin,
		cutMax: cutMax, published: published, drained: rcv.lastDelivered().Sub(began), drainAfter: drain, drainOK: ok, errors: errs}
	o.allRequests, _, o.allRepeated, _, _ = rcv.counts()
	return beside, o
}

// neighbourOther is what the other endpoint saw in a scenario.
type neighbourOther struct {
	requests, repeated, errors int
	cutMin, cutMax             time.Duration
	published, drained         time.Duration
	drainAfter                 time.Duration
	drainOK                    bool
	// allRequests and allRepeated are counted once everything drained.
	allRequests, allRepeated int
	// held is what PostgreSQL recorded of the deliveries whose request
	// was held (answerHeld); nil when not read (a peer's).
	held *heldRecord
}

// heldRecord is how many deliveries were recorded delivered by an attempt
// that took about the hold, and the shortest and longest such attempt.
type heldRecord struct {
	delivered         int
	shortest, longest time.Duration
}

// heldDeliveries reads, for a subscription whose receiver held requests for
// hold, the delivered deliveries whose successful attempt took at least
// hold less 1 s, once n of its deliveries are recorded delivered (or a
// minute passed): the receiver's last answers are recorded a moment after
// it sent them.
func heldDeliveries(b *testing.B, url, subID string, n int, hold time.Duration) heldRecord {
	waitCount(b, url, n, time.Minute, `SELECT count(*) FROM deliveries WHERE subscription_id = $1
		AND status = 'delivered'`, subID)
	db, err := sql.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var h heldRecord
	var lo, hi sql.NullFloat64
	err = db.QueryRow(`SELECT count(*), min(a.duration_ms), max(a.duration_ms) FROM deliveries d
		JOIN attempts a ON a.delivery_id = d.id AND a.success
		WHERE d.subscription_id = $1 AND d.status = 'delivered' AND a.duration_ms >= $2`,
		subID, float64((hold-time.Second).Milliseconds())).Scan(&h.delivered, &lo, &hi)
	if err != nil {
		b.Fatal(err)
	}
	h.shortest, h.longest = time.Duration(lo.Float64*float64(time.Millisecond)), time.Duration(hi.Float64*float64(time.Millisecond))
	return h
}

// reportNeighbour prints a scenario's line and keeps its figures for the
// summary.
func (r *shippedRun) reportNeighbour(sc neighbourScenario, alone, beside phaseResult, o neighbourOther) {
	line, ratio := r.neighbourLine(sc, alone, beside, o)
	r.printf("neighbour %s", line)
	r.extra["neighbour "+sc.name] = line
	limit := 50 * time.Millisecond
	if sc.saturating {
		limit = 100 * time.Millisecond
	}
	if beside.e2e[1] > limit || (!sc.saturating && ratio > 2) || !o.drainOK {
		r.printf("neighbour %s: MISSED (p95 limit %v%s)", sc.name, limit, map[bool]string{false: ", 2× alone", true: ""}[sc.saturating])
	}
}

// neighbourLine describes a scenario: the healthy endpoint's latency beside
// it, and its ratio to alone, and what the other endpoint saw.
func (r *shippedRun) neighbourLine(sc neighbourScenario, alone, beside phaseResult, o neighbourOther) (string, float64) {
	ratio := float64(beside.e2e[1]) / float64(max(alone.e2e[1], time.Microsecond))
	line := fmt.Sprintf("%s: healthy p50/p95/p99 %s / %s / %s (p95 %.2f× alone); other endpoint: %d events published in %.1fs (%d failed), %d requests while misbehaving, %d events sent more than once",
		sc.name, ms(beside.e2e[0]), ms(beside.e2e[1]), ms(beside.e2e[2]), ratio, sc.events, o.published.Seconds(),
		o.errors, o.requests, o.repeated)
	line += fmt.Sprintf(" (at the end: %d requests, %d events sent more than once)", o.allRequests, o.allRepeated)
	if o.held != nil {
		line += fmt.Sprintf(", %d recorded delivered by a held request of %.1f-%.1fs", o.held.delivered,
			o.held.shortest.Seconds(), o.held.longest.Seconds())
	}
	if sc.mode == answerNever {
		line += fmt.Sprintf(", requests cut after %.1f-%.1fs", o.cutMin.Seconds(), o.cutMax.Seconds())
	}
	if sc.mode == answerAtOnce {
		rate := float64(sc.events) / o.drained.Seconds()
		line += fmt.Sprintf(", burst drained at %.1f/s", rate)
		if floor, ok := r.results["floor saturated"]; ok && floor.perSecond > 0 {
			line += fmt.Sprintf(" (%.2f× the floor's saturated rate)", rate/floor.perSecond)
		}
	}
	line += fmt.Sprintf("; drained %.1fs after it answered at once (all: %v)", o.drainAfter.Seconds(), o.drainOK)
	return line, ratio
}

// waitRetrying waits until n deliveries of the subscription are recorded
// retrying, each with its next attempt due: their workflows have done what
// follows a failed attempt and sleep on their timers.
func waitRetrying(b *testing.B, url, subID string, n int, limit time.Duration) {
	got, err := waitCount(b, url, n, limit, `SELECT count(*) FROM deliveries WHERE subscription_id = $1
		AND status = 'retrying' AND next_attempt_at IS NOT NULL`, subID)
	if got < n {
		b.Fatalf("%d of %d deliveries retrying after %s (%v)", got, n, limit, err)
	}
}

// waitCount polls query, a count, every second until it gives n or more,
// or limit passed; it returns the last count and error.
func waitCount(b *testing.B, url string, n int, limit time.Duration, query string, args ...any) (int, error) {
	db, err := sql.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for end := time.Now().Add(limit); ; time.Sleep(time.Second) {
		var got int
		err := db.QueryRow(query, args...).Scan(&got)
		if (err == nil && got >= n) || time.Now().After(end) {
			return got, err
		}
	}
}
