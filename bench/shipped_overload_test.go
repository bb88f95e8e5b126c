package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// backlogWatch polls GET /v1/backlog every 2 s: the lag the API shows.
type backlogWatch struct {
	mu      sync.Mutex
	maxLag  float64
	maxPend int
	samples []string // one every 10 s
	stop    chan struct{}
	done    chan struct{}
}

func watchBacklog(api string) *backlogWatch {
	w := &backlogWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		begin := time.Now()
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			case <-time.After(2 * time.Second):
			}
			w.poll(api, i%5 == 4, time.Since(begin))
		}
	}()
	return w
}

func (w *backlogWatch) poll(api string, keep bool, at time.Duration) {
	resp, err := benchHTTP.Get(api + "/v1/backlog")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var b struct {
		Pending    int     `json:"pending"`
		Unstarted  int     `json:"unstarted"`
		LagSeconds float64 `json:"lag_seconds"`
	}
	if json.NewDecoder(resp.Body).Decode(&b) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.maxLag, w.maxPend = max(w.maxLag, b.LagSeconds), max(w.maxPend, b.Pending)
	if keep {
		w.samples = append(w.samples, fmt.Sprintf("%.0fs: %d pending (%d unstarted), lag %.1fs",
			at.Seconds(), b.Pending, b.Unstarted, b.LagSeconds))
	}
}

func (w *backlogWatch) end() {
	close(w.stop)
	<-w.done
}

// overload publishes at 3× the saturated rate just measured for a minute
// (open loop: on schedule, whatever the answers), then waits for the backlog
// to drain, watching the lag in the API and counting it in the log.
func (r *shippedRun) overload() {
	rate := 3 * r.results["hookrelay saturated"].perSecond
	if v, err := strconv.ParseFloat(os.Getenv("HOOKRELAY_BENCH_OVERLOAD_RATE"), 64); err == nil && v > 0 {
		rate = v
	}
	if rate <= 0 {
		r.b.Error("overload: no saturated rate to triple")
		return
	}
	d := envSeconds("HOOKRELAY_BENCH_OVERLOAD_SECONDS", time.Minute)
	capacity := max(r.results["hookrelay saturated"].perSecond, 1)
	limit := time.Duration(2*rate*d.Seconds()/capacity)*time.Second + time.Minute
	w, before := watchBacklog(r.dev.api), serverMetrics(r.dev.api)
	res := r.phase(fmt.Sprintf("overload %.0f/s", rate), limit, func() []shot {
		return openLoop(rate, d, r.hookrelay("hr-over"))
	})
	w.end()
	drain := res.lastReceipt.Sub(res.sendEnd)
	r.results["overload"] = res
	r.extra["overload"] = fmt.Sprintf("%.0f/s (3× saturated) for %v: %d published (%.1f/s answered), %d errors, %d lost; publish answer p50/p99/max %s / %s / %s; drained %.1fs after publishing ended (backlog worked off at %.1f/s); largest lag in GET /v1/backlog %.1fs, %d pending",
		rate, d, res.events-res.errors, res.publishedPerSecondSent, res.errors, res.lost,
		ms(res.pub[0]), ms(res.pub[2]), ms(res.pub[3]), drain.Seconds(), res.perSecond, w.maxLag, w.maxPend)
	r.printf("overload: %s", r.extra["overload"])
	r.printf("  backlog in the API every 10 s: %s", strings.Join(w.samples, "; "))
	r.printf("  inside hookrelay: %s", serverSide(before, serverMetrics(r.dev.api)))
	for _, msg := range []string{"start_queue_lag", "delivery_backlog", "start_queue_full", "sweeper_starting_deliveries"} {
		n, last := r.dev.logLines(msg)
		r.printf("  log %-28s %4d lines; last: %s", msg, n, last)
	}
}

// serverMetrics reads, from the API's /metrics, the lines that say how
// often hookrelay's PostgreSQL pools made a caller wait and how long the
// server itself took over the publishes (202s of POST /v1/events, by
// histogram bucket), keyed by the line's name and labels.
func serverMetrics(api string) map[string]float64 {
	out := map[string]float64{}
	req, err := http.NewRequest(http.MethodGet, api+"/metrics", nil)
	if err != nil {
		return out
	}
	req.Header.Set("Authorization", "Bearer "+benchMetricsToken)
	resp, err := benchHTTP.Do(req)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		publish := strings.HasPrefix(line, "hookrelay_http_request_duration_seconds_") &&
			strings.Contains(line, `code="202"`) && strings.Contains(line, `url="/v1/events"`)
		if !publish && !strings.HasPrefix(line, "go_sql_wait_") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			v, _ := strconv.ParseFloat(line[i+1:], 64)
			out[line[:i]] = v
		}
	}
	return out
}

// serverSide says, between two readings of serverMetrics, how often each
// pool made a caller wait, and what share of the publishes the server
// itself answered within 25 and 50 ms (a publisher also waits for its own
// process and the network).
func serverSide(before, after map[string]float64) string {
	d := func(prefix, part string) float64 {
		var sum float64
		for k, v := range after {
			if strings.HasPrefix(k, prefix) && strings.Contains(k, part) {
				sum += v - before[k]
			}
		}
		return sum
	}
	all := d("hookrelay_http_request_duration_seconds_count", "")
	share := func(le string) float64 {
		return 100 * d("hookrelay_http_request_duration_seconds_bucket", `le="`+le+`"`) / max(all, 1)
	}
	return fmt.Sprintf("pool waits: api %.0f (%.2f s), worker %.0f (%.2f s); publishes answered by the server within 25 ms %.2f%%, within 50 ms %.2f%% (of %.0f)",
		d("go_sql_wait_count_total", `"api"`), d("go_sql_wait_duration_seconds_total", `"api"`),
		d("go_sql_wait_count_total", `"worker"`), d("go_sql_wait_duration_seconds_total", `"worker"`),
		share("0.025"), share("0.05"), all)
}
