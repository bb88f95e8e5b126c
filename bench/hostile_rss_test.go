package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
)

// hostileKinds are receivers that try to make hookrelay keep what they send:
// each answers every request this way until the attempt's timeout ends it.
var hostileKinds = map[string]http.HandlerFunc{
	"huge-header": func(w http.ResponseWriter, _ *http.Request) { // 9 MB header
		w.Header().Set("X-Huge", strings.Repeat("h", 9<<20))
		w.WriteHeader(http.StatusInternalServerError)
	},
	"endless-body": func(w http.ResponseWriter, r *http.Request) { // 200, then bytes forever
		w.WriteHeader(http.StatusOK)
		chunk := bytes.Repeat([]byte("e"), 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	},
	"trickle": func(w http.ResponseWriter, r *http.Request) { // 200, then a byte every 100 ms
		w.WriteHeader(http.StatusOK)
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte("t")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	},
	"many-headers": func(w http.ResponseWriter, _ *http.Request) { // 60 KB of headers, under the client's limit
		for i := 0; i < 600; i++ {
			w.Header().Set("X-H-"+strconv.Itoa(i), strings.Repeat("m", 90))
		}
		w.WriteHeader(http.StatusBadGateway)
	},
}

// BenchmarkHostileRSS: issue 10's memory bound. `hookrelay dev` as `make
// run` starts it (API and worker in one process) delivers one event to each
// of 200 receivers at once, twice: first 200 polite receivers (200 OK at
// once, the baseline), then 200 hostile ones (50 of each kind above), each
// under a 5 s attempt timeout and 3 attempts. The process's peak RSS is
// sampled from /proc every 50 ms in each phase; the run fails if the hostile
// peak exceeds hostileRSSBound, or a GET of a hostile event answers 1 MB or
// more.
func BenchmarkHostileRSS(b *testing.B) {
	d := startDev(b)
	pid := d.cmd.Process.Pid
	fmt.Printf("machine: %s\nload at start: %s\nidle RSS after start: %s\n", machine(), machineLoad(), mb(rssOf(pid, "VmRSS")))
	politePeak := d.rssPhase(b, pid, func(int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	}, "polite")
	names := []string{"huge-header", "endless-body", "trickle", "many-headers"}
	hostilePeak := d.rssPhase(b, pid, func(i int) http.HandlerFunc { return hostileKinds[names[i%4]] }, "hostile")
	fmt.Printf("peak RSS, 200 polite receivers (baseline): %s\npeak RSS, 200 hostile receivers: %s (bound %s)\nVmHWM (whole run): %s\n",
		mb(politePeak), mb(hostilePeak), mb(hostileRSSBound), mb(rssOf(pid, "VmHWM")))
	if hostilePeak > hostileRSSBound {
		b.Fatalf("peak RSS %s with hostile receivers, over the bound %s", mb(hostilePeak), mb(hostileRSSBound))
	}
}

// hostileRSSBound is the stated bound on hookrelay dev's RSS with 200
// hostile receivers at once.
const hostileRSSBound = 200 << 20

// rssPhase subscribes 200 receivers made by handler, publishes one event to
// each, samples the process's RSS until every delivery has ended, and
// returns the peak. It also checks that GET of each event stays under 1 MB.
func (d *devServer) rssPhase(b *testing.B, pid int, handler func(i int) http.HandlerFunc, phase string) int64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	go func() {
		for t := time.NewTicker(50 * time.Millisecond); ; {
			if r := rssOf(pid, "VmRSS"); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	defer close(stop)
	ids := make([]string, 200)
	for i := range ids {
		srv := httptest.NewServer(handler(i))
		b.Cleanup(srv.Close)
		typ := fmt.Sprintf("%s.%d", phase, i)
		d.post(b, "/v1/subscriptions", fmt.Sprintf(`{"url": %q, "event_types": [%q], "policy": "custom",
			"retry_policy": {"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 3, "timeout_seconds": 5}}`, srv.URL+"/h", typ))
		ids[i] = typ + "-event"
	}
	begin := time.Now()
	for i, id := range ids {
		d.post(b, "/v1/events", fmt.Sprintf(`{"id": %q, "type": "%s.%d", "data": {}}`, id, phase, i))
	}
	biggest := d.waitEnded(b, ids, 5*time.Minute)
	fmt.Printf("%s: 200 deliveries ended in %.1f s; largest GET /v1/events answer %d bytes\n",
		phase, time.Since(begin).Seconds(), biggest)
	if biggest >= 1<<20 {
		b.Fatalf("%s: GET /v1/events answered %d bytes, want under 1 MB", phase, biggest)
	}
	return peak.Load()
}

// waitEnded polls the events until none has a delivery in flight, and
// returns the largest answer seen.
func (d *devServer) waitEnded(b *testing.B, ids []string, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		biggest, open := 0, 0
		for _, id := range ids {
			body := d.get(b, "/v1/events/"+id)
			biggest = max(biggest, len(body))
			var ev struct {
				Deliveries []struct{ Status string } `json:"deliveries"`
			}
			if err := json.Unmarshal(body, &ev); err != nil || len(ev.Deliveries) == 0 {
				b.Fatalf("GET /v1/events/%s: %v %.200s", id, err, body)
			}
			if !slices.Contains(policies.FinalStatuses, policies.Status(ev.Deliveries[0].Status)) {
				open++
			}
		}
		if open == 0 {
			return biggest
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d deliveries still open after %v", open, limit)
		}
		time.Sleep(time.Second)
	}
}

func (d *devServer) post(b *testing.B, path, body string) {
	resp, err := http.Post(d.api+path, "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		out, _ := io.ReadAll(resp.Body)
		b.Fatalf("POST %s: %d %s", path, resp.StatusCode, out)
	}
}

func (d *devServer) get(b *testing.B, path string) []byte {
	resp, err := http.Get(d.api + path)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// rssOf reads one of /proc/pid/status's memory lines (VmRSS, VmHWM) in bytes.
func rssOf(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/(1<<20)) }
