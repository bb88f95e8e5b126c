package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/bench/results"
	"github.com/hookrelay/hookrelay/chaos"
	"github.com/hookrelay/hookrelay/cluster"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// failureRate is the steady publish of every failure, in events a second.
const failureRate = 15

// failure is one thing a cluster must survive, done midway through a
// steady publish to both APIs.
type failure struct {
	name, what string
	events     int               // published at least, and on until the fault has ended (at most 4×)
	fault      func(*run) string // does it; a note for the table
}

var failureList = []failure{
	{"baseline", "none", 60, func(*run) string { return "" }},
	{"kill-history", "kill -9 history-1, restarted once history-2 holds every shard", 150, killHistory},
	{"kill-frontend", "kill -9 frontend, restarted 2 s later", 150, restartAfter("frontend", 2*time.Second)},
	{"kill-matching", "kill -9 matching, restarted 2 s later", 150, restartAfter("matching", 2*time.Second)},
	{"kill-api", "kill -9 api-2 (publishers fail over to api-1), restarted 5 s later", 150, restartAfter("api-2", 5*time.Second)},
	{"scale-workers", "a third worker added, then worker-1 stopped (SIGTERM) once it polls", 150, scaleWorkers},
}

// run is the stack the failures run on.
type run struct {
	t      *testing.T
	c      *cluster.Cluster
	st     *store.Store
	rcv    *chaos.Receiver
	killed *chaos.Faults // when the running failure killed a hookrelay process
}

// outcome is a failure's reconciliation.
type outcome struct {
	failure
	chaos.Tally
	refused   int // publishes an API refused, then sent to the other
	note      string
	slowest   float64 // seconds from a delivery's publish to its end, at most
	wall      time.Duration
	attempted int
}

func (o outcome) String() string {
	return fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d (%d unknown, %d cut) | %d | %.1f s | %.1f s | %.1f s |",
		o.name, o.what, o.Published, o.refused, o.Statuses[policies.StatusDelivered], o.Statuses[policies.StatusDeadLettered],
		o.Lost, o.Stuck, o.Duplicates, o.Rows, o.Unknown, o.Cut, o.Requests, o.slowest, o.Settle.Seconds(), o.wall.Seconds())
}

// passed says whether the failure lost nothing, left nothing stuck,
// delivered every accepted event and has one attempts row per request but
// for those a kill cut off.
func (o outcome) passed() bool {
	return o.Lost == 0 && o.Stuck == 0 && o.Rows == o.Requests+o.Cut && len(o.Unmatched) == 0 &&
		o.Published == o.attempted && o.Statuses[policies.StatusDelivered] == o.Published
}

// figures is the outcome as the data file's figures: the tally, the
// publishes failed over, the slowest delivery, the wall time, whether it
// passed.
func (o outcome) figures() map[string]float64 {
	f := o.Tally.Figures()
	f["refused"], f["attempted"], f["slowest_s"], f["wall_s"] = float64(o.refused), float64(o.attempted), o.slowest, o.wall.Seconds()
	f["passed"] = 0
	if o.passed() {
		f["passed"] = 1
	}
	return f
}

// failures runs every failure in turn on the running stack and prints their
// table; each must lose nothing, leave nothing stuck, deliver every
// accepted event and have, delivery by delivery, one attempts row per
// request the receiver saw, but for rows a kill cut off (chaos.Match).
func failures(t *testing.T, c *cluster.Cluster, st *store.Store, out *results.Writer) {
	r := &run{t: t, c: c, st: st, rcv: chaos.NewReceiver()}
	defer r.rcv.Close()
	var table []outcome
	only := os.Getenv("HOOKRELAY_CLUSTER_ONLY")
	for _, f := range failureList {
		if only == "" || strings.Contains(only, f.name) {
			table = append(table, r.one(f))
		}
	}
	fmt.Println("| scenario | fault | accepted | refused, failed over | delivered | dead-lettered | lost | stuck | duplicates | attempt rows | requests | slowest | settle | wall |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, o := range table {
		fmt.Println(o)
	}
	for _, o := range table {
		if o.note != "" {
			fmt.Printf("%s: %s\n", o.name, o.note)
		}
		for reason, n := range o.Reasons {
			fmt.Printf("%s: %d ended: %.120s\n", o.name, n, reason)
		}
		for _, line := range o.Unmatched {
			fmt.Printf("%s: unmatched: %s\n", o.name, line)
		}
		record(t, out, o.name, o.figures(), map[string]string{"fault": o.what})
		if !o.passed() {
			t.Errorf("%s: %d of %d accepted, %d delivered, %d lost, %d stuck, %d attempt rows (%d cut by a kill) for %d requests",
				o.name, o.Published, o.attempted, o.Statuses[policies.StatusDelivered], o.Lost, o.Stuck, o.Rows, o.Cut, o.Requests)
		}
	}
}

// one subscribes the receiver, publishes at failureRate with the fault
// from midway, waits for every delivery to end and reconciles.
func (r *run) one(f failure) outcome {
	typ := "cluster." + f.name
	r.killed = &chaos.Faults{}
	subID := r.subscribe(chaos.Subscription(r.rcv.URL, f.name, "ok", typ))
	done := make(chan struct{})
	o := outcome{failure: f}
	pub := &publisher{apis: r.c.APIs, client: &http.Client{Timeout: 10 * time.Second}}
	var keys []string
	begin := time.Now()
	for i := 0; i < 4*f.events && (i < f.events || !ended(done)); i++ {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * time.Second / failureRate)))
		if i == f.events/2 {
			go func() { o.note = f.fault(r); close(done) }()
		}
		key := fmt.Sprintf("%s-%d", f.name, i)
		if pub.publish(i, key, typ) {
			keys = append(keys, key)
		}
		o.attempted++
	}
	<-done
	published := time.Now()
	o.Published, o.refused = len(keys), pub.refused
	o.Stuck = chaos.Settle(r.st.DB(), subID, 3*time.Minute)
	o.Settle, o.wall = time.Since(published), time.Since(begin)
	if err := chaos.Reconcile(r.st.DB(), subID, keys, &o.Tally); err != nil {
		r.t.Fatal(err)
	}
	o.Requests, o.Duplicates = r.rcv.Counts(f.name)
	if err := chaos.Match(r.st.DB(), subID, r.rcv.Seen, r.killed, &o.Tally); err != nil {
		r.t.Fatal(err)
	}
	err := r.st.DB().Get(&o.slowest, `SELECT coalesce(max(extract(epoch FROM finished_at - created_at)), 0)::float8
		FROM deliveries WHERE subscription_id = $1`, subID)
	if err != nil {
		r.t.Fatal(err)
	}
	return o
}

func ended(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// subscribe creates a subscription and returns its id.
func (r *run) subscribe(body string) string {
	resp, err := http.Post(r.c.API+"/v1/subscriptions", "application/json", strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		r.t.Fatalf("POST /v1/subscriptions: %s (%v)", resp.Status, err)
	}
	return out.ID
}

// publisher publishes each event to one API, in turn, and to the next API
// (same Idempotency-Key) when one refuses it, as a client behind a load
// balancer would.
type publisher struct {
	apis    []string
	client  *http.Client
	refused int
}

// publish publishes event i until an API accepts it, or a minute passes.
func (p *publisher) publish(i int, key, typ string) bool {
	deadline := time.Now().Add(time.Minute)
	for try := 0; time.Now().Before(deadline); try++ {
		if p.once(p.apis[(i+try)%len(p.apis)], key, typ) {
			return true
		}
		p.refused++
		if try%len(p.apis) == len(p.apis)-1 {
			time.Sleep(200 * time.Millisecond) // every API refused: wait before the next round
		}
	}
	return false
}

// once POSTs the event to api and reports whether it was accepted (202, or
// 200 for a key it already has).
func (p *publisher) once(api, key, typ string) bool {
	req, _ := http.NewRequest(http.MethodPost, api+"/v1/events", strings.NewReader(`{"type": "`+typ+`", "data": {}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := p.client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode < 300
}

// restartAfter kills (kill -9) process name and starts it again after pause.
// A hookrelay process's kill is marked: rows it had open may be cut off
// before their requests (chaos.Match).
func restartAfter(name string, pause time.Duration) func(*run) string {
	return func(r *run) string {
		if strings.HasPrefix(name, "api") || strings.HasPrefix(name, "worker") {
			r.killed.Mark()
		}
		restart(r.t, r.c, name, pause)
		return ""
	}
}

// scaleWorkers adds a worker, waits until Temporal sees it poll hookrelay's
// task queue, then stops worker-1 as scaling down would.
func scaleWorkers(r *run) string {
	begin := time.Now()
	name, err := r.c.AddWorker(context.Background())
	if err != nil {
		r.t.Error(err)
		return ""
	}
	polling := r.waitPoller(name)
	if err := r.c.StopProcess("worker-1"); err != nil {
		r.t.Error(err)
	}
	return fmt.Sprintf("%s added, polling after %.1f s; worker-1 stopped", name, polling.Sub(begin).Seconds())
}

// waitPoller waits (a minute at most) until Temporal lists process name
// (by its pid, which starts the SDK's worker identity) among the pollers
// of hookrelay's main task queue, and returns when.
func (r *run) waitPoller(name string) time.Time {
	tc, err := client.Dial(client.Options{HostPort: r.c.Temporal, Namespace: "default"})
	if err != nil {
		r.t.Error(err)
		return time.Now()
	}
	defer tc.Close()
	var pid int
	for _, p := range r.c.Processes() {
		if p.Name == name {
			pid = p.Pid
		}
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		res, err := tc.DescribeTaskQueue(context.Background(), workflows.DefaultQueues().Main, enums.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			continue
		}
		for _, p := range res.GetPollers() {
			if strings.HasPrefix(p.GetIdentity(), fmt.Sprintf("%d@", pid)) {
				return time.Now()
			}
		}
	}
	r.t.Errorf("%s (pid %d) never polled %s", name, pid, workflows.DefaultQueues().Main)
	return time.Now()
}
