package main

import (
	"fmt"
	"strings"

	"github.com/hookrelay/hookrelay/bench/results"
)

// neighbourLimits are issue 51's lines for the healthy endpoint's p95 beside
// each scenario, by its letter: (c) and (d) saturate the machine and are
// held to 100 ms; the others to 2× alone and 50 ms.
var neighbourLimits = map[byte]string{'a': "≤ 2× and 50 ms", 'b': "≤ 2× and 50 ms", 'c': "≤ 100 ms",
	'd': "≤ 100 ms", 'e': "≤ 2× and 50 ms"}

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
		s.WriteString(row(name, percentiles(l), times(p95, pok, a95, aok), neighbourLimits[name[0]],
			metLine(name[0], p95, pok, a95, aok), other))
	}
	return s.String() + "\n"
}

// percentiles are a phase's publish→receipt p50 / p95 / p99.
func percentiles(l results.Line) string {
	n := func(k string) string { v, ok := figure(l, k); return format(v, ok, "%.1f") }
	return n("e2e_p50_ms") + " / " + n("e2e_p95_ms") + " / " + n("e2e_p99_ms") + " ms"
}

// metLine says whether p95 met the scenario's line.
func metLine(letter byte, p95 float64, ok bool, alone float64, aok bool) string {
	if !ok || !aok {
		return none
	}
	met := p95 <= 100
	if letter != 'c' && letter != 'd' {
		met = p95 <= 50 && p95 <= 2*alone
	}
	if met {
		return "yes"
	}
	return fmt.Sprintf("**no** (%.1f ms)", p95)
}
