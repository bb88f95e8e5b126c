package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/proto"

	"github.com/hookrelay/hookrelay/bench/results"
	"github.com/hookrelay/hookrelay/testenv"
)

// The shipped benchmark's load. Saturated: shippedSaturated events from 16
// publishers as fast as they are answered. Paced: each rate for
// shippedPacedFor. Fan-out: shippedFanOut subscriptions, shippedFanOutEvents
// publications. Overload: 3× the saturated rate measured in the same run
// (HOOKRELAY_BENCH_OVERLOAD_RATE overrides) for HOOKRELAY_BENCH_OVERLOAD_SECONDS
// (default 60).
const (
	shippedSaturated    = 1000
	shippedPublishers   = 16
	shippedPacedFor     = 20 * time.Second
	shippedFanOut       = 200
	shippedFanOutEvents = 3
	shippedDirectFor    = 3 * time.Second
)

var shippedRates = []float64{20, 50}

// shippedRun is one run of BenchmarkShipped or BenchmarkCluster: the
// servers, the receiver and what was measured.
type shippedRun struct {
	b       *testing.B
	target  string // what runs hookrelay, for the summary
	dev     *devServer
	ran     map[string]bool // the phases run
	rcv     *hitReceiver
	c       client.Client
	log     strings.Builder
	results map[string]phaseResult
	extra   map[string]string
	// figures are the numbers of the lines that are not phases (the
	// direct POST, histories), written with them (record).
	figures map[string]map[string]float64
	out     *results.Writer // the run's data file, nil when not written
	// orderedOneKey is the events/s one ordering key must reach on this
	// shape (issue 56); disorder counts the ordered deliveries recorded out
	// of order or not delivered (shipped_ordered_test.go).
	orderedOneKey float64
	disorder      int
}

// BenchmarkShipped measures hookrelay as `make run` ships it: `hookrelay dev`
// built from this tree on a fresh data dir (PostgreSQL cluster, file-backed
// Temporal dev server, worker and API in one process), a receiver and the
// publishers in this process, all on loopback. In the same run, on the same
// dev server, the baseline (a bare workflow running one HTTP activity to the
// same receiver) and the direct-POST limit. It prints a self-describing
// summary; BENCHMARKS.md explains it.
func BenchmarkShipped(b *testing.B) {
	for range b.N {
		r := newRun(b, "hookrelay as `make run` ships it (file-backed dev server, fresh data dir)")
		r.orderedOneKey = 50
		r.run(startDev, "saturated", "paced", "fanout", "histories", "peer", "ordered", "overload", "neighbours")
	}
}

func newRun(b *testing.B, target string) *shippedRun {
	return &shippedRun{b: b, target: target, ran: map[string]bool{},
		results: map[string]phaseResult{}, extra: map[string]string{},
		figures: map[string]map[string]float64{}, out: results.Open(suiteOf(b.Name()))}
}

// run starts the servers with start and runs the phases named (those
// HOOKRELAY_BENCH_PHASES leaves) against them, then prints the summary.
func (r *shippedRun) run(start func(*testing.B) *devServer, phases ...string) {
	begin := time.Now()
	r.printf("machine: %s", machine())
	r.printf("load before start: %s", machineLoad())
	r.dev = start(r.b)
	r.printf("%s ready in %v (data dir %s, log %s)", r.target, r.dev.startup.Round(time.Millisecond), r.dev.dataDir, r.dev.logPath)
	r.rcv = newHitReceiver(r.b)
	r.c = dialBench(r.b, r.dev.temporal)
	startBaselineWorker(r.b, r.c)
	subscribe(r.b, r.dev.api, "bench", r.rcv.url+"/hook")
	r.direct()
	steps := map[string]func(){"saturated": r.saturated, "paced": r.pacedAll, "fanout": r.fanOut,
		"histories": r.histories, "peer": r.peer, "ordered": r.ordered, "overload": r.overload,
		"neighbours": r.neighbours}
	for _, name := range phases {
		if phaseWanted(name) {
			steps[name]()
			r.ran[name] = true
		}
	}
	r.extra["total"] = time.Since(begin).Round(time.Second).String()
	r.summary()
}

func dialBench(b *testing.B, addr string) client.Client {
	// Uncompressed, as hookrelay's own client: the floor is the cheapest
	// delivery, and gzip costs both sides CPU for messages this small.
	c, err := client.Dial(client.Options{HostPort: addr, Logger: sdklog.NewStructuredLogger(testenv.Logger()),
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// printf adds a line to the run's log and prints it at once.
func (r *shippedRun) printf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.log.WriteString(line + "\n")
	fmt.Println(line)
}

// phase runs one load, waits up to limit for its receipts and reports it;
// it starts once our processes are idle (settle), and the machine's load is
// sampled just before.
func (r *shippedRun) phase(name string, limit time.Duration, run func() []shot) phaseResult {
	return r.phaseAfter(settle(), name, limit, run)
}

// phaseAfter is phase, started at once: settled says what came before (the
// answer of settle, or why there was none).
func (r *shippedRun) phaseAfter(settled, name string, limit time.Duration, run func() []shot) phaseResult {
	load, calls := settled+"; "+machineLoad(), persistenceCalls(r.dev.temporalMetrics)
	cpu, begin := takeCPU(), time.Now()
	res := measure(name, r.rcv, run(), limit)
	res.load, res.cpu = load, cpu.cpuPer(res.receipts, time.Since(begin))
	time.Sleep(2 * time.Second) // let the last workflows close
	after := persistenceCalls(r.dev.temporalMetrics)
	r.results[name] = res
	r.printf("%-22s %5d events, %5d receipts in %6.1fs: %6.1f/s; publish→receipt p50/p95/p99 %s / %s / %s; publish answer p50/p99/max %s / %s / %s; errors %d, lost %d\n%22s load before: %s",
		name, res.events, res.receipts, res.lastReceipt.Sub(res.firstSend).Seconds(), res.perSecond,
		ms(res.e2e[0]), ms(res.e2e[1]), ms(res.e2e[2]), ms(res.pub[0]), ms(res.pub[2]), ms(res.pub[3]),
		res.errors, res.lost, "", load)
	r.printf("%22s %s", "", res.cpu)
	r.printf("%22s receipts arrived by (25%%, 50%%, 75%%, 90%%, all; from the first send): %s, %s, %s, %s, %s", "",
		ms(res.arrivals[0]), ms(res.arrivals[1]), ms(res.arrivals[2]), ms(res.arrivals[3]), ms(res.arrivals[4]))
	if calls != nil {
		r.printf("%22s Temporal persistence calls per delivery: %s", "", perDelivery(calls, after, res.receipts))
	}
	if res.errors > 0 || res.lost > 0 {
		r.b.Errorf("%s: %d publications failed, %d receipts missing after %v", name, res.errors, res.lost, limit)
	}
	return res
}

func (r *shippedRun) hookrelay(prefix string) sendFunc {
	return publisher{api: r.dev.api, typ: "bench", prefix: prefix, paths: []string{"/hook"}}.send
}

func (r *shippedRun) direct() {
	load := machineLoad()
	perSec, p50, p99 := directLimit(r.rcv.url, shippedDirectFor)
	r.extra["direct"] = fmt.Sprintf("%.0f POST/s from 16 goroutines, latency p50 %s, p99 %s", perSec, ms(p50), ms(p99))
	r.figures["direct POST"] = map[string]float64{"per_second": perSec, "p50_ms": millis(p50), "p99_ms": millis(p99)}
	r.printf("direct POST limit: %s\n%22s load before: %s", r.extra["direct"], "", load)
}

// openStats starts counting hookrelay's statements; nil (said) when the
// database has no pg_stat_statements.
func (r *shippedRun) openStats() *pgStats {
	stats, err := openStats(r.dev.pgURL)
	if err == nil {
		err = stats.reset()
	}
	if err != nil {
		r.printf("statements not counted: %v", err)
		return nil
	}
	return stats
}

// phaseWanted says whether HOOKRELAY_BENCH_PHASES (a comma-separated list
// of saturated, paced, fanout, histories, peer, ordered, overload; empty: all) names the
// phase. A partial run is for trying a change quickly; the figures in
// BENCHMARKS.md come from whole runs.
func phaseWanted(name string) bool {
	list := os.Getenv("HOOKRELAY_BENCH_PHASES")
	return list == "" || slices.Contains(strings.Split(list, ","), name)
}

func (r *shippedRun) pacedAll() {
	for _, rate := range shippedRates {
		r.paced(rate)
	}
}

// paced runs each system at rate for shippedPacedFor: the floor, hookrelay,
// then the baseline. The baseline goes last: at 50/s on the cluster it runs
// near its own saturation, and the backlog it leaves (visibility records,
// PostgreSQL's autovacuum of what it churned) would land in the phase after
// it, which used to be hookrelay's. Each phase follows a checkpoint of
// PostgreSQL (checkpoint), so each pays for the whole pages written into
// the log after one.
func (r *shippedRun) paced(rate float64) {
	limit := shippedPacedFor + 3*time.Minute
	tag := strconv.Itoa(int(rate))
	r.checkpoint()
	r.phase("floor "+tag+"/s", limit, func() []shot {
		return openLoop(rate, shippedPacedFor, floorSender(r.c, r.rcv.url, "floor-"+tag))
	})
	r.checkpoint()
	profile(r.dev.api, "hookrelay-"+tag, shippedPacedFor-2*time.Second)
	r.phase("hookrelay "+tag+"/s", limit, func() []shot {
		return openLoop(rate, shippedPacedFor, r.hookrelay("hr-"+tag))
	})
	r.checkpoint()
	r.phase("baseline "+tag+"/s", limit, func() []shot {
		return openLoop(rate, shippedPacedFor, baselineSender(r.c, r.rcv.url, "base-"+tag))
	})
}

// fanOut subscribes shippedFanOut URLs (one endpoint each) to one type and
// publishes shippedFanOutEvents events of it, one at a time, 2 s apart.
func (r *shippedRun) fanOut() {
	paths := make([]string, shippedFanOut)
	for i := range paths {
		paths[i] = fmt.Sprintf("/fan/%d", i)
		subscribe(r.b, r.dev.api, "fanout", r.rcv.url+paths[i])
	}
	p := publisher{api: r.dev.api, typ: "fanout", prefix: "fan", paths: paths}
	r.phase("fan-out 200", 5*time.Minute, func() []shot {
		shots := make([]shot, shippedFanOutEvents)
		for i := range shots {
			shots[i] = p.send(i)
			time.Sleep(2 * time.Second)
		}
		return shots
	})
}

// histories counts the history events, the billable Temporal Cloud actions
// they stand for (billableActions) and their encoded size (what the server
// stores), of up to ten workflows of each saturated phase.
func (r *shippedRun) histories() {
	for _, key := range []string{"floor", "baseline", "hookrelay"} {
		name := key + " saturated"
		events, actions, size, n := 0, 0, 0, 0
		var last []*historypb.HistoryEvent
		for _, id := range r.results[name].workflowIDs {
			h, err := history(r.c, id)
			if err != nil {
				r.b.Errorf("history of %s: %v", id, err)
				continue
			}
			events += len(h)
			actions += billableActions(h)
			size += historyBytes(h)
			n++
			last = h
		}
		if n > 0 {
			per := func(v int) float64 { return float64(v) / float64(n) }
			r.extra["history "+name] = fmt.Sprintf("%.1f events, %.1f actions, %.0f bytes", per(events), per(actions), per(size))
			r.figures["history "+key] = map[string]float64{"events": per(events), "actions": per(actions), "bytes": per(size)}
			r.printf("history per first-attempt delivery, %s: %s (mean of %d), e.g. %s", name, r.extra["history "+name], n, eventTypes(last))
		}
	}
}

// historyBytes is the size of a history's events, encoded as the server
// stores them.
func historyBytes(h []*historypb.HistoryEvent) int {
	n := 0
	for _, e := range h {
		n += proto.Size(e)
	}
	return n
}

// history is a closed workflow's events.
func history(c client.Client, id string) ([]*historypb.HistoryEvent, error) {
	return historyRun(c, id, "")
}

// historyRun is the events of one run of a workflow ("": its latest) so far.
func historyRun(c client.Client, id, run string) ([]*historypb.HistoryEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, run, false, 0)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	return events, nil
}

// eventTypes lists the events' types.
func eventTypes(h []*historypb.HistoryEvent) string {
	types := make([]string, len(h))
	for i, e := range h {
		types[i] = strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
	}
	return strings.Join(types, " ")
}

// billableActions estimates the Temporal Cloud actions a history stands
// for, as Temporal Cloud counts them from histories: the start, every
// activity scheduled, the local activities of one workflow task as one,
// every timer, signal and search-attribute upsert. Version markers are
// not counted.
func billableActions(h []*historypb.HistoryEvent) int {
	n, localInTask := 0, false
	for _, e := range h {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			enumspb.EVENT_TYPE_TIMER_STARTED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
			enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			n++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			localInTask = false
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" && !localInTask {
				n, localInTask = n+1, true
			}
		}
	}
	return n
}

// envSeconds reads a duration in seconds from the environment.
func envSeconds(name string, def time.Duration) time.Duration {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return def
}
