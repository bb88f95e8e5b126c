package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hookrelay/hookrelay/bench/results"
)

// The systems of the summary, in its order: the floor first, every figure a
// ratio to it.
var summaryRows = []struct{ key, label string }{
	{"floor", "floor (eager start, local-activity POST)"},
	{"baseline", "bare workflow + 1 HTTP activity"},
	{"hookrelay", "**hookrelay**"},
	{"peer", "peer"},
}

// summary prints the run's figures, one row a system, each beside the
// same-run floor (a phase not run shows zeros), and each target of issue 22
// with whether this run met it.
func (r *shippedRun) summary() {
	var s strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&s, format+"\n", args...) }
	floor := r.results["floor saturated"]
	line("\n===== summary: %s =====", r.target)
	line("%s", strings.SplitN(r.log.String(), "\n", 2)[0])
	line("took %s; the machine's load before each phase is in the phase lines above", r.extra["total"])
	line("| system | saturated/s (%d events, %d publishers) | × floor | publish→receipt p50 / p95 / p99 at 50/s | publish answer p99 at 50/s | history per delivery |",
		shippedSaturated, shippedPublishers)
	line("|---|---|---|---|---|---|")
	for _, row := range summaryRows {
		sat, ok := r.results[row.key+" saturated"]
		if !ok {
			continue
		}
		label := row.label
		if row.key == "peer" {
			label = r.extra["peer name"]
		}
		p := r.results[row.key+" 50/s"]
		line("| %s | %.1f | %.2f | %s / %s / %s | %s | %s |", label, sat.perSecond, ratio(sat.perSecond, floor.perSecond),
			ms(p.e2e[0]), ms(p.e2e[1]), ms(p.e2e[2]), ms(p.pub[2]), r.extra["history "+row.key+" saturated"])
	}
	r.details(line)
	r.targets(line)
	fmt.Print(s.String())
	if err := r.record(); err != nil {
		r.b.Errorf("writing the results: %v", err)
	}
	hr, base := r.results["hookrelay saturated"], r.results["baseline saturated"]
	r.b.ReportMetric(hr.perSecond, "hookrelay_per_s")
	r.b.ReportMetric(floor.perSecond, "floor_per_s")
	r.b.ReportMetric(base.perSecond, "baseline_per_s")
	r.b.ReportMetric(ratio(hr.perSecond, floor.perSecond), "x_floor")
}

// details prints the figures the table leaves out: 20/s, fan-out, the
// direct POST, overload, duplicates.
func (r *shippedRun) details(line func(string, ...any)) {
	for _, row := range summaryRows {
		if p, ok := r.results[row.key+" 20/s"]; ok {
			line("at 20/s, %s: publish→receipt p50 / p95 / p99 %s / %s / %s, publish answer p99 %s",
				row.key, ms(p.e2e[0]), ms(p.e2e[1]), ms(p.e2e[2]), ms(p.pub[2]))
		}
	}
	fan := r.results["fan-out 200"]
	line("fan-out to %d subscriptions: publish answer max %s over %d publications; their %d deliveries p50 / p99 %s / %s after publishing",
		shippedFanOut, ms(fan.pub[3]), fan.events, fan.receipts, ms(fan.e2e[0]), ms(fan.e2e[2]))
	line("direct POST limit: %s", r.extra["direct"])
	line("ordered, one subscription (1, 10, 100 ordering keys; history and actions per ordered delivery): %s", r.extra["ordered"])
	line("overload: %s", r.extra["overload"])
	for _, sc := range neighbourScenarios {
		if l, ok := r.extra["neighbour "+sc.name]; ok {
			line("neighbour %s", l)
		}
	}
	line("duplicate receipts (at-least-once; same id and path twice): %d", r.rcv.dups.Load())
}

// targets prints issue 22's "Done when" lines with this run's figures.
func (r *shippedRun) targets(line func(string, ...any)) {
	floor, hr := r.results["floor saturated"], r.results["hookrelay saturated"]
	p50, over := r.results["hookrelay 50/s"], r.results["overload"]
	check := func(phase string, ok bool, format string, args ...any) {
		verdict := "met    "
		switch {
		case !r.ran[phase]:
			verdict = "not run"
		case !ok:
			verdict = "NOT met"
		}
		line("  [%s] "+format, append([]any{verdict}, args...)...)
	}
	line("issue 22 targets, this run:")
	check("saturated", hr.perSecond >= 0.8*floor.perSecond, "saturated first-attempt deliveries/s >= 0.8x the same-run floor: %.2fx (%.1f vs %.1f)",
		ratio(hr.perSecond, floor.perSecond), hr.perSecond, floor.perSecond)
	check("paced", p50.e2e[1] <= 25*time.Millisecond, "publish→receipt p95 <= 25 ms at 50/s: %s", ms(p50.e2e[1]))
	check("paced", p50.pub[2] <= 20*time.Millisecond, "publish answer p99 <= 20 ms at 50/s: %s", ms(p50.pub[2]))
	check("overload", over.lost == 0 && over.errors == 0 && over.events > 0, "overload: 0 lost: %d lost, %d errors of %d", over.lost, over.errors, over.events)
	check("overload", !over.lastReceipt.IsZero(), "overload: drain time stated: %.1fs after publishing ended", over.lastReceipt.Sub(over.sendEnd).Seconds())
	r.orderedTargets(check)
}

// orderedTargets prints issue 56's "Done when" lines with this run's
// figures, through check.
func (r *shippedRun) orderedTargets(check func(phase string, ok bool, format string, args ...any)) {
	one, ten, hr := r.results["ordered 1 keys"], r.results["ordered 10 keys"], r.results["hookrelay saturated"]
	lost := 0
	for _, o := range shippedOrdered {
		res := r.results[fmt.Sprintf("ordered %d keys", o.keys)]
		lost += res.lost + res.errors
	}
	check("ordered", one.perSecond >= r.orderedOneKey, "issue 56: one ordering key >= %.0f events/s: %.1f/s", r.orderedOneKey, one.perSecond)
	ratioPhase := "ordered"
	if !r.ran["saturated"] {
		ratioPhase = "saturated" // no unordered rate to compare with
	}
	check(ratioPhase, ten.perSecond >= 0.5*hr.perSecond, "issue 56: 10 keys >= 0.5x the unordered rate: %.2fx (%.1f vs %.1f)",
		ratio(ten.perSecond, hr.perSecond), ten.perSecond, hr.perSecond)
	check("ordered", lost == 0 && r.disorder == 0, "issue 56: nothing lost, none out of order: %d lost or failed, %d out of order or not delivered",
		lost, r.disorder)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// suiteOf is the data file's suite of a benchmark: BenchmarkCluster's
// lines are the cluster's, every other's `make run`'s.
func suiteOf(benchmark string) string {
	if strings.HasPrefix(benchmark, "BenchmarkCluster") {
		return results.SuiteBenchCluster
	}
	return results.SuiteBenchDev
}

// record writes the run as data, when HOOKRELAY_RESULTS names a file: one
// line a phase (in the order of their names), the lines that are not
// phases (direct POST, histories), and a line "run" with the summary's
// other figures as notes. BENCHMARKS.md's tables are made from them
// (bench/report).
func (r *shippedRun) record() error {
	for _, name := range slices.Sorted(maps.Keys(r.results)) {
		res := r.results[name]
		if err := r.out.Add(name, phaseFigures(res), map[string]string{"load": res.load, "cpu": res.cpu}); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.figures)) {
		if err := r.out.Add(name, r.figures[name], nil); err != nil {
			return err
		}
	}
	notes := maps.Clone(r.extra)
	notes["target"] = r.target
	return r.out.Add("run", map[string]float64{"duplicates": float64(r.rcv.dups.Load())}, notes)
}

// phaseFigures is a phase's result as the data file's figures.
func phaseFigures(res phaseResult) map[string]float64 {
	f := map[string]float64{"events": float64(res.events), "receipts": float64(res.receipts),
		"errors": float64(res.errors), "lost": float64(res.lost), "per_second": res.perSecond,
		"published_per_second": res.publishedPerSecondSent}
	for i, p := range []string{"p50", "p95", "p99"} {
		f["e2e_"+p+"_ms"] = millis(res.e2e[i])
	}
	for i, p := range []string{"p50", "p95", "p99", "max"} {
		f["publish_"+p+"_ms"] = millis(res.pub[i])
	}
	if !res.lastReceipt.IsZero() && !res.sendEnd.IsZero() {
		f["drain_s"] = res.lastReceipt.Sub(res.sendEnd).Seconds()
	}
	return f
}
