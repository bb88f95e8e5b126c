package bench

import (
	"fmt"
	"strings"
	"time"
)

// summary prints the run's figures side by side with the same-run baseline
// (a phase not run shows zeros),
// and each target of issue 12 with whether this run met it.
func (r *shippedRun) summary() {
	var s strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&s, format+"\n", args...) }
	base, hr := r.results["baseline saturated"], r.results["hookrelay saturated"]
	line("\n===== summary: %s =====", r.target)
	line("%s", strings.SplitN(r.log.String(), "\n", 2)[0])
	line("took %s; the machine's load before each phase is in the phase lines above", r.extra["total"])
	line("| | baseline (bare workflow + 1 HTTP activity, same server) | hookrelay | ratio |")
	line("|---|---|---|---|")
	line("| saturated first-attempt deliveries/s (%d events, %d publishers) | %.1f | %.1f | %.2f |",
		shippedSaturated, shippedPublishers, base.perSecond, hr.perSecond, ratio(hr.perSecond, base.perSecond))
	for _, rate := range shippedRates {
		b, h := r.results[fmt.Sprintf("baseline %d/s", int(rate))], r.results[fmt.Sprintf("hookrelay %d/s", int(rate))]
		line("| publish→receipt p50 / p95 / p99 at %d/s | %s / %s / %s | %s / %s / %s | p95 %.2f |", int(rate),
			ms(b.e2e[0]), ms(b.e2e[1]), ms(b.e2e[2]), ms(h.e2e[0]), ms(h.e2e[1]), ms(h.e2e[2]), ratio(h.e2e[1].Seconds(), b.e2e[1].Seconds()))
		line("| publish answer p99 at %d/s (baseline: the start call) | %s | %s | |", int(rate), ms(b.pub[2]), ms(h.pub[2]))
	}
	line("| history events per first-attempt delivery | %s | %s | |", r.extra["history baseline saturated"], r.extra["history hookrelay saturated"])
	fan := r.results["fan-out 200"]
	line("fan-out to %d subscriptions: publish answer max %s over %d publications; their %d deliveries p50 / p99 %s / %s after publishing",
		shippedFanOut, ms(fan.pub[3]), fan.events, fan.receipts, ms(fan.e2e[0]), ms(fan.e2e[2]))
	line("direct POST limit: %s", r.extra["direct"])
	line("overload: %s", r.extra["overload"])
	line("duplicate receipts (at-least-once; same id and path twice): %d", r.rcv.dups.Load())
	r.targets(line)
	fmt.Print(s.String())
	r.b.ReportMetric(hr.perSecond, "hookrelay_per_s")
	r.b.ReportMetric(base.perSecond, "baseline_per_s")
	r.b.ReportMetric(ratio(hr.perSecond, base.perSecond), "ratio")
}

// targets prints issue 12's "Done when" lines with this run's figures.
func (r *shippedRun) targets(line func(string, ...any)) {
	base, hr := r.results["baseline saturated"], r.results["hookrelay saturated"]
	p20, p50 := r.results["hookrelay 20/s"], r.results["hookrelay 50/s"]
	over := r.results["overload"]
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
	line("issue 12 targets, this run:")
	check("saturated", hr.perSecond >= 100, "saturated first-attempt deliveries/s >= 100: %.1f", hr.perSecond)
	check("saturated", hr.perSecond >= base.perSecond, "at least 1.0x the same-run baseline: %.2fx (%.1f vs %.1f)",
		ratio(hr.perSecond, base.perSecond), hr.perSecond, base.perSecond)
	check("paced", p20.e2e[1] <= 100*time.Millisecond, "publish→receipt p95 <= 100 ms at 20/s: %s", ms(p20.e2e[1]))
	check("paced", p50.e2e[1] <= 150*time.Millisecond, "publish→receipt p95 <= 150 ms at 50/s: %s", ms(p50.e2e[1]))
	check("paced", p50.pub[2] <= 20*time.Millisecond, "publish p99 <= 20 ms at 50/s: %s", ms(p50.pub[2]))
	fan := r.results["fan-out 200"]
	check("fanout", fan.pub[3] <= 100*time.Millisecond && fan.errors == 0, "a publish fanning out to 200 answers within 100 ms: max %s", ms(fan.pub[3]))
	check("overload", over.lost == 0 && over.errors == 0 && over.events > 0, "overload: 0 lost: %d lost, %d errors of %d", over.lost, over.errors, over.events)
	check("overload", over.pub[2] < 50*time.Millisecond && over.events > 0, "overload: publish p99 < 50 ms: %s", ms(over.pub[2]))
	check("overload", !over.lastReceipt.IsZero(), "overload: drain time stated: %.1fs after publishing ended", over.lastReceipt.Sub(over.sendEnd).Seconds())
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
