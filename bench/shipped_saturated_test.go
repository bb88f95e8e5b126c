package bench

import (
	"fmt"
	"strings"
	"time"
)

// shippedRounds is how many times the saturated load runs on the floor and
// on hookrelay, in counterbalanced order (HOOKRELAY_BENCH_ROUNDS
// overrides), after shippedWarmUp events to each, not counted.
const (
	shippedRounds = 4
	shippedWarmUp = 300
)

// saturated runs the saturated load on the floor and on hookrelay in
// counterbalanced rounds, then once on the bare activity baseline. One 1,000-
// event phase varies by about ±10% from run to run, and a phase pays for
// what ran before it: the server's files grow (a floor run after
// hookrelay's phase was 7% slower than the first; over a run's rounds both
// systems slow by about 2% a phase), and the baseline's workflow-task and
// activity timers fire for half a minute after it. The two systems run in
// counterbalanced order, floor first in odd rounds and hookrelay first in
// even ones (F H, H F, F H, H F), so that neither runs later on average,
// and the baseline last; each is summed over its rounds (receipts ÷ the
// phases' time), and every round is printed. Both first get a warm-up, printed but not
// counted: a first phase on a fresh hookrelay ran 10-15% below the next
// ones (pools and prepared statements filling, the heap growing), and the
// floor's first phase is the only one on an empty server. hookrelay's
// statements are counted over its first round.
func (r *shippedRun) saturated() {
	limit := 5 * time.Minute
	rounds := envInt("HOOKRELAY_BENCH_ROUNDS", shippedRounds)
	r.phase("floor warm-up", limit, func() []shot {
		return closedLoop(shippedWarmUp, shippedPublishers, floorSender(r.c, r.rcv.url, "floor-warm"))
	})
	r.phase("hookrelay warm-up", limit, func() []shot {
		return closedLoop(shippedWarmUp, shippedPublishers, r.hookrelay("hr-warm"))
	})
	var floors, hrs []phaseResult
	for i := 1; i <= rounds; i++ {
		if i%2 == 1 {
			floors = append(floors, r.floorRound(i, limit))
		}
		hrs = append(hrs, r.hookrelayRound(i, limit))
		if i%2 == 0 {
			floors = append(floors, r.floorRound(i, limit))
		}
	}
	floor, hr := summed(floors), summed(hrs)
	r.results["floor saturated"], r.results["hookrelay saturated"] = floor, hr
	r.printf("saturated over %d counterbalanced rounds (floor / hookrelay, deliveries/s): %s; summed: %.1f / %.1f = %.2fx",
		rounds, roundsLine(floors, hrs), floor.perSecond, hr.perSecond, hr.perSecond/floor.perSecond)
	r.phase("baseline saturated", limit, func() []shot {
		return closedLoop(shippedSaturated, shippedPublishers, baselineSender(r.c, r.rcv.url, "base-sat"))
	})
}

// floorRound runs the floor's saturated round i.
func (r *shippedRun) floorRound(i int, limit time.Duration) phaseResult {
	return r.phase(fmt.Sprintf("floor saturated #%d", i), limit, func() []shot {
		return closedLoop(shippedSaturated, shippedPublishers, floorSender(r.c, r.rcv.url, fmt.Sprintf("floor-sat%d", i)))
	})
}

// hookrelayRound runs hookrelay's saturated round i; its statements are
// counted (and its profile taken) in the first, which starts once the
// floor's tail is done.
func (r *shippedRun) hookrelayRound(i int, limit time.Duration) phaseResult {
	var stats *pgStats
	if i == 1 {
		settle()
		stats = r.openStats()
		profile(r.dev.api, "hookrelay-saturated", 8*time.Second)
	}
	res := r.phase(fmt.Sprintf("hookrelay saturated #%d", i), limit, func() []shot {
		return closedLoop(shippedSaturated, shippedPublishers, r.hookrelay(fmt.Sprintf("hr-sat%d", i)))
	})
	if stats != nil {
		r.statements(stats, res.receipts)
	}
	return res
}

// statements reports hookrelay's own statements counted by stats.
func (r *shippedRun) statements(stats *pgStats, deliveries int) {
	report, err := stats.report(deliveries)
	if err != nil {
		r.b.Errorf("pg_stat_statements: %v", err)
	}
	r.extra["statements"] = report
	r.printf("hookrelay's own PostgreSQL statements over its first saturated round (publish, start, attempt, bookkeeping, background): %s", report)
}

// summed is one result for rounds of the same load: their receipts over
// the sum of their phases' times, their errors and losses added up; the
// latencies, load, CPU and workflows are the first round's.
func summed(rounds []phaseResult) phaseResult {
	out := rounds[0]
	took := out.lastReceipt.Sub(out.firstSend)
	for _, p := range rounds[1:] {
		out.events, out.receipts = out.events+p.events, out.receipts+p.receipts
		out.errors, out.lost = out.errors+p.errors, out.lost+p.lost
		took += p.lastReceipt.Sub(p.firstSend)
	}
	if took > 0 {
		out.perSecond = float64(out.receipts) / took.Seconds()
	}
	return out
}

// roundsLine lists each round's two rates and their ratio.
func roundsLine(floors, hrs []phaseResult) string {
	parts := make([]string, len(floors))
	for i := range floors {
		parts[i] = fmt.Sprintf("%.1f / %.1f (%.2fx)", floors[i].perSecond, hrs[i].perSecond, hrs[i].perSecond/floors[i].perSecond)
	}
	return strings.Join(parts, ", ")
}
