package bench

import (
	"bufio"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// persistenceCalls reads the Temporal server's persistence calls by
// operation from its Prometheus metrics at url (the dev server's
// --metrics-port); nil when it cannot.
func persistenceCalls(url string) map[string]float64 {
	if url == "" {
		return nil
	}
	resp, err := http.Get(url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		key := ""
		for prefix, kind := range persistenceFamilies {
			if strings.HasPrefix(line, prefix+"{") {
				key = kind + " " + label(line, "operation")
			}
		}
		sp := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[sp+1:], 64); err == nil && key != "" {
			out[key] += v
		}
	}
	return out
}

// persistenceFamilies are the metrics persistenceCalls reads: calls and the
// seconds they took, of the history store and of the visibility store.
var persistenceFamilies = map[string]string{
	"persistence_requests":               "calls",
	"persistence_latency_sum":            "seconds",
	"visibility_persistence_requests":    "calls",
	"visibility_persistence_latency_sum": "seconds",
}

// label is the value of a label in a Prometheus text line.
func label(line, name string) string {
	i := strings.Index(line, name+`="`)
	if i < 0 {
		return ""
	}
	rest := line[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

// perDelivery states the persistence calls between before and after per
// delivery, and the time they took, longest first.
func perDelivery(before, after map[string]float64, deliveries int) string {
	if after == nil || deliveries == 0 {
		return "not measured"
	}
	type op struct {
		name      string
		calls, ms float64
	}
	var ops []op
	calls, ms := 0.0, 0.0
	for key, v := range after {
		kind, name, _ := strings.Cut(key, " ")
		if kind != "calls" {
			continue
		}
		o := op{name: name, calls: (v - before[key]) / float64(deliveries),
			ms: 1000 * (after["seconds "+name] - before["seconds "+name]) / float64(deliveries)}
		calls, ms = calls+o.calls, ms+o.ms
		if o.calls >= 0.05 {
			ops = append(ops, o)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].ms > ops[j].ms })
	var b strings.Builder
	fmt.Fprintf(&b, "%.1f calls taking %.2f ms in all:", calls, ms)
	for _, o := range ops {
		fmt.Fprintf(&b, " %s %.2f (%.2f ms),", o.name, o.calls, o.ms)
	}
	return strings.TrimSuffix(b.String(), ",")
}
