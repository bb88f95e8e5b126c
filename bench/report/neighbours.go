package main

import (
	"fmt"
	"strings"

	"github.com/hookrelay/hookrelay/bench/results"
)

// neighbourLine is issue 51's line for the healthy endpoint's p95 beside a
// scenario: at most ms, and at most timesAlone its p95 alone (zero: no
// such bound).
type neighbourLine struct{ ms, timesAlone float64 }

// neighbourLines are the lines by scenario letter: (c) and (d) saturate the
// machine and are held to 100 ms; the others to 2× alone and 50 ms.
var neighbourLines = map[byte]neighbourLine{'a': {50, 2}, 'b': {50, 2}, 'c': {100, 0}, 'd': {100, 0}, 'e': {50, 2}}

// String is the line as the table states it.
func (l neighbourLine) String() string {
	if l.timesAlone == 0 {
		return fmt.Sprintf("≤ %.0f ms", l.ms)
	}
	return fmt.Sprintf("≤ %.0f× and %.0f ms", l.timesAlone, l.ms)
}

// met says whether p95 met the line, given the p95 alone.
func (l neighbourLine) met(p95, alone float64) bool {
	return p95 <= l.ms && (l.timesAlone == 0 || p95 <= l.timesAlone*alone)
}

// neighboursTable is a shape's noisy-neighbour phase: the healthy
// endpoint's publish→receipt alone and beside each misbehaving endpoint,
// whether it met its line, and what the other endpoint got.
func neighboursTable(lines []results.Line) string {
	alone, err := results.Find(lines, "healthy alone")
	if err != nil {
		return "\nNot run.\n\n"
	}
	var s strings.Builder
	a95, aok := figure(alone, "e2e_p95_ms")
	s.WriteString("\n" + header("healthy endpoint (20/s)", "p50 / p95 / p99", "p95 × alone", "line", "met", "the other endpoint"))
	s.WriteString(row("alone", percentiles(alone), "1.00×", "", "", ""))
	run, _ := results.Find(lines, "run")
	for _, l := range lines {
		name, ok := strings.CutPrefix(l.Phase, "healthy beside ")
		if !ok || name == "" {
			continue
		}
		p95, pok := figure(l, "e2e_p95_ms")
		other := run.Notes["neighbour "+name]
		if _, after, found := strings.Cut(other, "other endpoint: "); found {
			other = after
		}
		line := neighbourLines[name[0]]
		s.WriteString(row(name, percentiles(l), times(p95, pok, a95, aok), line.String(), met(line, p95, pok, a95, aok), other))
	}
	return s.String() + "\n"
}

// percentiles are a phase's publish→receipt p50 / p95 / p99.
func percentiles(l results.Line) string {
	n := func(k string) string { v, ok := figure(l, k); return format(v, ok, "%.1f") }
	return n("e2e_p50_ms") + " / " + n("e2e_p95_ms") + " / " + n("e2e_p99_ms") + " ms"
}

// met says whether p95 met line, or none when a figure is missing.
func met(line neighbourLine, p95 float64, ok bool, alone float64, aok bool) string {
	switch {
	case !ok || !aok:
		return none
	case line.met(p95, alone):
		return "yes"
	}
	return fmt.Sprintf("**no** (%.1f ms)", p95)
}
