package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// benchHTTP is the publishers' and the baseline activity's HTTP client.
var benchHTTP = &http.Client{Timeout: time.Minute, Transport: &http.Transport{
	MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048, IdleConnTimeout: time.Minute,
}}

// payload is the event data every phase sends (about 150 bytes).
func payload(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"order":{"id":"ord-%d","total":"12.50","currency":"EUR","items":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}]}}`, i))
}

// publisher publishes events of one type to hookrelay's API; every event is
// expected once at each of paths on the receiver.
// With orderingKeys set, the i-th event's ordering key is orderingKey(i).
type publisher struct {
	api, typ, prefix string
	paths            []string
	orderingKeys     int
}

// orderingKey is the ordering key of the i-th event: the prefix and i
// modulo orderingKeys, so that each phase's keys are its own.
func (p publisher) orderingKey(i int) string {
	return p.prefix + "-" + strconv.Itoa(i%p.orderingKeys)
}

func (p publisher) send(i int) shot {
	id := fmt.Sprintf("%s-%d", p.prefix, i)
	ev := map[string]any{"id": id, "type": p.typ, "data": payload(i)}
	if p.orderingKeys > 0 {
		ev["ordering_key"] = p.orderingKey(i)
	}
	body, _ := json.Marshal(ev)
	s := shot{sent: time.Now()}
	resp, err := benchHTTP.Post(p.api+"/v1/events", "application/json", bytes.NewReader(body))
	if err != nil {
		s.err = err
		return s
	}
	defer resp.Body.Close()
	var ans struct {
		Deliveries []struct {
			WorkflowID string `json:"workflow_id"`
		} `json:"deliveries"`
	}
	err = json.NewDecoder(resp.Body).Decode(&ans)
	s.answered = time.Now()
	if resp.StatusCode != http.StatusAccepted || err != nil || len(ans.Deliveries) != len(p.paths) {
		s.err = fmt.Errorf("publish %s: %s, %d deliveries (%v)", id, resp.Status, len(ans.Deliveries), err)
		return s
	}
	s.workflowID = ans.Deliveries[0].WorkflowID
	for _, path := range p.paths {
		s.keys = append(s.keys, hitKey(id, path))
	}
	return s
}

// subscribe creates a subscription of typ to url under the Event Grid policy.
func subscribe(b *testing.B, api, typ, url string) {
	subscribeJSON(b, api, fmt.Sprintf(`{"url":%q,"event_types":[%q],"policy":"eventgrid"}`, url, typ))
}

// subscribeJSON creates the subscription body describes and returns its id.
func subscribeJSON(b *testing.B, api, body string) (id string) {
	resp, err := benchHTTP.Post(api+"/v1/subscriptions", "application/json", bytes.NewBufferString(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	var sub struct{ ID string }
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(msg, &sub) != nil {
		b.Fatalf("subscribe: %s %s", resp.Status, msg)
	}
	return sub.ID
}

// The baseline: the least a Temporal-based delivery can cost on the same
// server. A bare workflow that runs one activity, which POSTs the same body
// to the same receiver (MaximumAttempts 1), on its own task queue, started
// with client.ExecuteWorkflow by the same publishers.
const (
	baselineQueue    = "bench-baseline"
	baselineWorkflow = "BenchBaseline"
	baselineActivity = "BenchPost"
	baselinePath     = "/baseline"
)

// postRetry is the retry policy of the floor's and the baseline's POST: a
// request that fails (a keep-alive connection the receiver closed as it was
// reused, a stall of the machine) is tried twice more, as hookrelay's
// policies would, rather than counted as a receipt lost. A POST that
// succeeds, nearly every one, is one attempt.
var postRetry = &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3}

func baselineFlow(ctx workflow.Context, url, id string, i int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second, RetryPolicy: postRetry})
	return workflow.ExecuteActivity(ctx, baselineActivity, url, id, i).Get(ctx, nil)
}

func baselinePost(ctx context.Context, url, id string, i int) error {
	body, _ := json.Marshal(map[string]any{"id": id, "type": "bench", "data": payload(i)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Webhook-Id", id)
	resp, err := benchHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("receiver answered %s", resp.Status)
	}
	return nil
}

// startBaselineWorker runs the worker of the floor and the baseline
// (activity and local-activity slots as many as hookrelay's: 200) until the
// benchmark ends.
func startBaselineWorker(b *testing.B, c client.Client) {
	w := sdkworker.New(c, baselineQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize: 200, MaxConcurrentLocalActivityExecutionSize: 200})
	w.RegisterWorkflowWithOptions(baselineFlow, workflow.RegisterOptions{Name: baselineWorkflow})
	w.RegisterWorkflowWithOptions(floorFlow, workflow.RegisterOptions{Name: floorWorkflow})
	w.RegisterActivityWithOptions(baselinePost, activity.RegisterOptions{Name: baselineActivity})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
}

// baselineSender starts baseline workflows, each delivering to the receiver.
func baselineSender(c client.Client, rcvURL, prefix string) sendFunc {
	return func(i int) shot {
		id := fmt.Sprintf("%s-%d", prefix, i)
		s := shot{sent: time.Now(), workflowID: id}
		// Eager start, as hookrelay's starter asks for: the worker shares
		// this client, so the first task skips matching.
		opts := client.StartWorkflowOptions{ID: id, TaskQueue: baselineQueue, EnableEagerStart: true}
		_, s.err = c.ExecuteWorkflow(context.Background(), opts, baselineWorkflow, rcvURL+baselinePath, id, i)
		s.answered = time.Now()
		s.keys = []string{hitKey(id, baselinePath)}
		return s
	}
}

// directLimit POSTs the same body straight to the receiver from 16
// goroutines for d: the most the receiver and loopback take.
func directLimit(rcvURL string, d time.Duration) (perSecond float64, p50, p99 time.Duration) {
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	var seq atomic.Int64
	start := time.Now()
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Since(start) < d {
				i := int(seq.Add(1))
				t := time.Now()
				if baselinePost(context.Background(), rcvURL+"/direct", fmt.Sprintf("direct-%d", i), i) == nil {
					mine = append(mine, time.Since(t))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return float64(len(lat)) / time.Since(start).Seconds(), pct(lat, 0.5), pct(lat, 0.99)
}
