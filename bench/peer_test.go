package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The peer: an optional phase that runs another webhook system beside
// hookrelay on the same machine, in the same run, with the same receiver and
// publishers, reported as a ratio to the same floor. HOOKRELAY_BENCH_PEER
// names the folder of a harness script, convoy.sh, that can start Convoy
// (a webhook gateway on PostgreSQL and Redis) with convoy_start, print its
// settings with convoy_env and stop it with convoy_stop; unset, the phase is
// skipped. Convoy delivers every event of its project to one endpoint, here
// the receiver's /convoy path; the receiver knows a request by the event's
// idempotency key, which Convoy sends as X-Convoy-Idempotency-Key.
const (
	envPeer  = "HOOKRELAY_BENCH_PEER"
	peerPath = "/convoy"
	// convoyIDHeader carries the event's idempotency key in Convoy's
	// requests.
	convoyIDHeader = "X-Convoy-Idempotency-Key"
)

// convoy is a running Convoy started by the harness.
type convoy struct {
	script                      string
	api, project, key, endpoint string
	env                         []string
}

// peer runs the peer's saturated and 50/s phases, when HOOKRELAY_BENCH_PEER
// is set.
func (r *shippedRun) peer() {
	dir := os.Getenv(envPeer)
	if dir == "" {
		r.printf("peer: not run (%s is not set)", envPeer)
		return
	}
	cv, err := startConvoy(filepath.Join(dir, "convoy.sh"), r.rcv.url+peerPath)
	if err != nil {
		r.b.Errorf("peer: %v", err)
		return
	}
	defer cv.stop()
	r.extra["peer name"] = cv.version() + " (peer)"
	r.phase("peer saturated", 5*time.Minute, func() []shot {
		return closedLoop(shippedSaturated, shippedPublishers, cv.sender("peer-sat"))
	})
	r.phase("peer 50/s", shippedPacedFor+3*time.Minute, func() []shot {
		return openLoop(50, shippedPacedFor, cv.sender("peer-50"))
	})
	if phaseWanted("neighbours") {
		r.peerNeighbours(cv)
	}
}

// peerPorts are the ports the peer listens on unless the environment names
// others: below Linux's ephemeral range (32768-60999), where the harness's
// own defaults lie, so that no port the cluster's processes were given by
// the kernel can hold one first (a run failed so: the peer's PostgreSQL
// found its port taken).
func peerPorts() []string {
	return []string{"CONVOY_PG_PORT=25432", "CONVOY_REDIS_PORT=26379",
		"CONVOY_API_PORT=25005", "CONVOY_AGENT_PORT=25008"}
}

// peerRetries is the project's retry strategy, which Convoy (v26.7.1)
// applies to every delivery of the project: the noisy-neighbour phase's
// policy, every 5 s, 100 times (neighbourPolicy). The saturated and 50/s
// phases never fail, so it changes nothing there.
func peerRetries() []string {
	return []string{"CONVOY_RETRY_TYPE=linear", "CONVOY_RETRY_SECONDS=5", "CONVOY_RETRY_COUNT=100"}
}

// startConvoy wipes the harness's state, starts Convoy with its endpoint at
// endpoint (and no receiver of its own), and reads its settings.
func startConvoy(script, endpoint string) (*convoy, error) {
	peerDir = os.Getenv("PEER_DIR")
	if peerDir == "" {
		peerDir = filepath.Join(os.TempDir(), "peer") // the harness's default
	}
	// The environment comes after peerPorts and peerRetries, so that what
	// it names wins.
	env := append(append(peerPorts(), peerRetries()...), os.Environ()...)
	env = append(env, "PEER_DIR="+peerDir, "CONVOY_START_RECEIVER=0", "CONVOY_ENDPOINT_URL="+endpoint)
	cv := &convoy{script: script, env: env}
	if _, err := cv.run("convoy_wipe >/dev/null 2>&1; convoy_start >/dev/null"); err != nil {
		return nil, fmt.Errorf("convoy_start: %w", err)
	}
	out, err := cv.run("convoy_env")
	if err != nil {
		cv.stop()
		return nil, fmt.Errorf("convoy_env: %w", err)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok {
			vars[k] = strings.Trim(v, `'"`)
		}
	}
	cv.api, cv.project, cv.key = vars["CONVOY_API_BASE"], vars["CONVOY_PROJECT_ID"], vars["CONVOY_API_KEY"]
	cv.endpoint = vars["CONVOY_ENDPOINT_ID"]
	if cv.api == "" || cv.project == "" || cv.key == "" || cv.endpoint == "" {
		cv.stop()
		return nil, fmt.Errorf("convoy_env printed no API settings: %q", out)
	}
	return cv, nil
}

// run runs a shell command with the harness sourced.
func (cv *convoy) run(cmd string) (string, error) {
	c := exec.Command("bash", "-c", ". \"$0\" && "+cmd, cv.script)
	c.Env = cv.env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func (cv *convoy) stop() { _, _ = cv.run("convoy_stop >/dev/null 2>&1") }

// version is the message of Convoy's health check (its name and version).
func (cv *convoy) version() string {
	resp, err := benchHTTP.Get(strings.TrimSuffix(cv.api, "/api/v1") + "/healthz")
	if err != nil {
		return "Convoy, version unknown"
	}
	defer resp.Body.Close()
	var h struct {
		Message string `json:"message"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&h) != nil || h.Message == "" {
		return "Convoy, version unknown"
	}
	return h.Message
}

// sender publishes events to Convoy's API for its first endpoint, each with
// its id as the idempotency key; every event is expected once at peerPath.
func (cv *convoy) sender(prefix string) sendFunc {
	return cv.senderTo(cv.endpoint, peerPath, prefix)
}

// senderTo publishes events to Convoy's endpoint, expected once each at path
// of the run's receiver.
func (cv *convoy) senderTo(endpoint, path, prefix string) sendFunc {
	return func(i int) shot {
		id := fmt.Sprintf("%s-%d", prefix, i)
		s := shot{sent: time.Now(), keys: []string{hitKey(id, path)}}
		err := cv.post("/events", map[string]any{"endpoint_id": endpoint, "event_type": "bench",
			"idempotency_key": id, "data": payload(i)}, nil)
		s.answered = time.Now()
		if err != nil {
			s.err = fmt.Errorf("convoy publish %s: %w", id, err)
		}
		return s
	}
}

// post sends body to the project's API path and decodes the answer's data
// into out, when given.
func (cv *convoy) post(path string, body, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, cv.api+"/projects/"+cv.project+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+cv.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := benchHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("convoy POST %s: %s: %s", path, resp.Status, msg)
	}
	if out == nil {
		return nil
	}
	var answer struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return err
	}
	return json.Unmarshal(answer.Data, out)
}
