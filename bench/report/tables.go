package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hookrelay/hookrelay/bench/results"
)

// tables are the tables a document can embed, by name; each is made from
// a data file's lines (the latest run of its suite in the file).
var tables = map[string]func([]results.Line) string{
	"bench-dev":            func(l []results.Line) string { return benchTable(results.Latest(l, results.SuiteBenchDev)) },
	"bench-cluster":        func(l []results.Line) string { return benchTable(results.Latest(l, results.SuiteBenchCluster)) },
	"bench-dev-phases":     func(l []results.Line) string { return phasesTable(results.Latest(l, results.SuiteBenchDev)) },
	"bench-cluster-phases": func(l []results.Line) string { return phasesTable(results.Latest(l, results.SuiteBenchCluster)) },
	"bench-dev-neighbours": func(l []results.Line) string {
		return neighboursTable(results.Latest(l, results.SuiteBenchDev))
	},
	"bench-cluster-neighbours": func(l []results.Line) string {
		return neighboursTable(results.Latest(l, results.SuiteBenchCluster))
	},
	"chaos":   func(l []results.Line) string { return chaosTable(results.Latest(l, results.SuiteChaos)) },
	"cluster": func(l []results.Line) string { return clusterTable(results.Latest(l, results.SuiteCluster)) },
}

func tableNames() []string { return slices.Sorted(maps.Keys(tables)) }

// none stands for a figure the run did not record.
const none = "—"

// figure is one figure of a line, and whether the line has it.
func figure(l results.Line, key string) (float64, bool) {
	v, ok := l.Figures[key]
	return v, ok
}

// get is a figure of phase in lines, and whether it is there.
func get(lines []results.Line, phase, key string) (float64, bool) {
	l, err := results.Find(lines, phase)
	if err != nil {
		return 0, false
	}
	return figure(l, key)
}

// format formats a figure with f, or none.
func format(v float64, ok bool, f string) string {
	if !ok {
		return none
	}
	return fmt.Sprintf(f, v)
}

// times is a ÷ b as a ratio ("0.88×"), or none when either is missing.
func times(a float64, aok bool, b float64, bok bool) string {
	if !aok || !bok || b == 0 {
		return none
	}
	if r := a / b; r < 0.1 {
		return fmt.Sprintf("%.4f×", r) // against the direct POST
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// heading says which run the lines are: suite, commit, start, machine, and
// the run's source note when it has one.
func heading(lines []results.Line) string {
	if len(lines) == 0 {
		return "Not run.\n"
	}
	l := lines[0]
	s := fmt.Sprintf("`%s` on commit `%s`, started %s UTC; machine: %s.", l.Suite, l.Commit,
		l.Started.UTC().Format("2006-01-02 15:04"), l.Machine)
	if src := l.Notes["source"]; src != "" {
		s += " " + src
	}
	return s + "\n"
}

// row is a markdown table row.
func row(cells ...string) string { return "| " + strings.Join(cells, " | ") + " |\n" }

// header is a markdown table's header row and rule.
func header(cells ...string) string {
	return row(cells...) + "|" + strings.Repeat(" --- |", len(cells)) + "\n"
}

// systems are the benchmark's systems, in the table's order: the floor
// first, every figure also a ratio to it.
var systems = []struct{ key, label string }{
	{"floor", "floor: eager start, the first task POSTs in a local activity"},
	{"baseline", "bare workflow + one HTTP activity"},
	{"hookrelay", "**hookrelay**"},
	{"peer", "Convoy (peer)"},
}

// benchTable is a shape's headline: each system's saturated rate and its
// 50/s latencies, each as a ratio to the same run's floor (and the rate to
// the bare activity workflow and the direct POST too), then the direct
// POST, the overload and duplicates.
func benchTable(lines []results.Line) string {
	if len(lines) == 0 {
		return "\n" + heading(lines) + "\n"
	}
	var s strings.Builder
	s.WriteString("\n" + heading(lines) + "\n")
	s.WriteString(header("system", "saturated/s", "× floor", "× bare activity", "× direct POST",
		"publish→receipt p95 at 50/s", "× floor", "publish answer p99 at 50/s", "× floor", "history per delivery"))
	floor, fok := get(lines, "floor saturated", "per_second")
	base, bok := get(lines, "baseline saturated", "per_second")
	direct, dok := get(lines, "direct POST", "per_second")
	fp95, fp95ok := get(lines, "floor 50/s", "e2e_p95_ms")
	fpub, fpubok := get(lines, "floor 50/s", "publish_p99_ms")
	for _, sys := range systems {
		sat, ok := get(lines, sys.key+" saturated", "per_second")
		if !ok {
			continue
		}
		p95, p95ok := get(lines, sys.key+" 50/s", "e2e_p95_ms")
		pub, pubok := get(lines, sys.key+" 50/s", "publish_p99_ms")
		s.WriteString(row(sys.label, fmt.Sprintf("%.1f", sat), times(sat, ok, floor, fok), times(sat, ok, base, bok),
			times(sat, ok, direct, dok), format(p95, p95ok, "%.1f ms"), times(p95, p95ok, fp95, fp95ok),
			format(pub, pubok, "%.1f ms"), times(pub, pubok, fpub, fpubok), history(lines, sys.key)))
	}
	s.WriteString("\n" + benchNotes(lines))
	return s.String() + "\n"
}

// history is a system's history events and billable actions per delivery,
// with their encoded bytes when the run recorded them.
func history(lines []results.Line, key string) string {
	phase := "history " + key
	e, eok := get(lines, phase, "events")
	a, aok := get(lines, phase, "actions")
	if !eok || !aok {
		return none
	}
	s := fmt.Sprintf("%.1f events, %.1f actions", e, a)
	if b, ok := get(lines, phase, "bytes"); ok {
		s += fmt.Sprintf(", %.0f bytes", b)
	}
	return s
}

// benchNotes are the lines under a shape's headline: the direct POST, the
// overload, duplicate receipts.
func benchNotes(lines []results.Line) string {
	var s strings.Builder
	direct, dok := get(lines, "direct POST", "per_second")
	fmt.Fprintf(&s, "- Direct POST to the receiver (16 goroutines): %s/s.\n", format(direct, dok, "%.0f"))
	if o, err := results.Find(lines, "overload"); err == nil {
		ev, _ := figure(o, "events")
		errs, _ := figure(o, "errors")
		lost, lok := figure(o, "lost")
		drain, drok := figure(o, "drain_s")
		pub, pubok := figure(o, "publish_p99_ms")
		fmt.Fprintf(&s, "- Overload (3× the saturated rate for 60 s): %.0f published, %s lost, publish answer p99 %s, drained %s after publishing ended.\n",
			ev-errs, format(lost, lok, "%.0f"), format(pub, pubok, "%.1f ms"), format(drain, drok, "%.1f s"))
	}
	dups, ok := get(lines, "run", "duplicates")
	fmt.Fprintf(&s, "- Duplicate receipts: %s.\n", format(dups, ok, "%.0f"))
	return s.String()
}

// phasesTable lists the phases of a shape's run with their own figures:
// each system's phases but the warm-ups and the saturated rounds (their
// sum is the saturated line; the data file has each), and the noisy
// neighbours (neighboursTable).
func phasesTable(lines []results.Line) string {
	var s strings.Builder
	s.WriteString("\n")
	s.WriteString(header("phase", "events", "receipts", "lost", "per second", "publish→receipt p50 / p95 / p99", "publish answer p99"))
	for _, l := range lines {
		// "overload" is the overload phase again (named "overload N/s"),
		// kept for the notes under the headline.
		if l.Phase == "run" || l.Phase == "direct POST" || l.Phase == "overload" || strings.HasPrefix(l.Phase, "history ") ||
			strings.Contains(l.Phase, " #") || strings.HasSuffix(l.Phase, "warm-up") || strings.HasPrefix(l.Phase, "healthy ") {
			continue
		}
		n := func(k, f string) string { v, ok := figure(l, k); return format(v, ok, f) }
		s.WriteString(row(l.Phase, n("events", "%.0f"), n("receipts", "%.0f"), n("lost", "%.0f"), n("per_second", "%.1f"),
			n("e2e_p50_ms", "%.1f")+" / "+n("e2e_p95_ms", "%.1f")+" / "+n("e2e_p99_ms", "%.1f")+" ms", n("publish_p99_ms", "%.1f ms")))
	}
	return s.String() + "\n"
}

// passed is a line's verdict.
func passed(l results.Line) string {
	switch v, ok := figure(l, "passed"); {
	case !ok:
		return none
	case v == 1:
		return "passed"
	default:
		return "**failed**"
	}
}

// rows is the attempts rows with those closed unknown and those cut.
func rows(l results.Line) string {
	n := func(k string) string { v, ok := figure(l, k); return format(v, ok, "%.0f") }
	return fmt.Sprintf("%s (%s unknown, %s cut)", n("rows"), n("unknown"), n("cut"))
}

// chaosTable is `make chaos`: a row a scenario.
func chaosTable(lines []results.Line) string {
	var s strings.Builder
	s.WriteString("\n" + heading(lines) + "\n")
	s.WriteString(header("scenario", "fault", "receiver", "published", "delivered", "dead-lettered", "lost", "stuck",
		"duplicates", "attempt rows", "requests", "settle", "result"))
	for _, l := range lines {
		n := func(k, f string) string { v, ok := figure(l, k); return format(v, ok, f) }
		s.WriteString(row(l.Phase, l.Notes["fault"], l.Notes["receiver"], n("published", "%.0f"), n("delivered", "%.0f"),
			n("dead_lettered", "%.0f"), n("lost", "%.0f"), n("stuck", "%.0f"), n("duplicates", "%.0f"), rows(l),
			n("requests", "%.0f"), n("settle_s", "%.1f s"), passed(l)))
	}
	return s.String() + "\n"
}

// clusterTable is `make test-cluster`: the 1,000 events across a worker's
// kill, the throughput beside the direct POST, and a row a failure.
func clusterTable(lines []results.Line) string {
	var s strings.Builder
	s.WriteString("\n" + heading(lines) + "\n")
	if l, err := results.Find(lines, "worker killed"); err == nil {
		n := func(k, f string) string { v, ok := figure(l, k); return format(v, ok, f) }
		fmt.Fprintf(&s, "- %s events to %s endpoints, a worker killed (`kill -9`) midway: %s delivered, %s duplicates, %s not ended, in %s (%s/s).\n",
			n("events", "%.0f"), n("endpoints", "%.0f"), n("delivered", "%.0f"), n("duplicates", "%.0f"),
			n("stuck", "%.0f"), n("took_s", "%.1f s"), n("per_second", "%.1f"))
	}
	if l, err := results.Find(lines, "throughput"); err == nil {
		v, ok := figure(l, "per_second")
		d, dok := figure(l, "direct_per_second")
		fmt.Fprintf(&s, "- Throughput, 500 events from 8 publishers: %s/s, %s the same 500 POSTed straight to the receiver (%s/s).\n",
			format(v, ok, "%.1f"), times(v, ok, d, dok), format(d, dok, "%.0f"))
	}
	s.WriteString("\n")
	s.WriteString(header("failure", "accepted", "refused, failed over", "delivered", "lost", "stuck", "duplicates",
		"attempt rows", "requests", "slowest delivery", "settle", "wall", "result"))
	for _, l := range lines {
		if l.Phase == "worker killed" || l.Phase == "throughput" {
			continue
		}
		n := func(k, f string) string { v, ok := figure(l, k); return format(v, ok, f) }
		s.WriteString(row(l.Phase, n("published", "%.0f"), n("refused", "%.0f"), n("delivered", "%.0f"), n("lost", "%.0f"),
			n("stuck", "%.0f"), n("duplicates", "%.0f"), rows(l), n("requests", "%.0f"), n("slowest_s", "%.1f s"),
			n("settle_s", "%.1f s"), n("wall_s", "%.1f s"), passed(l)))
	}
	return s.String() + "\n"
}
