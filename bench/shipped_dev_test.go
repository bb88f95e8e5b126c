package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/devenv"
)

// devServer is `hookrelay dev` run as `make run` runs it: the binary built
// from this tree, a fresh data directory (file-backed Temporal SQLite and a
// project-local PostgreSQL cluster in it), default settings; only the ports
// differ, so that it does not collide with anything on the machine.
type devServer struct {
	api      string // http://127.0.0.1:port
	temporal string // host:port of the Temporal frontend
	pgURL    string // hookrelay's database
	// temporalMetrics is the dev server's own /metrics, "" when not served.
	temporalMetrics string
	dataDir         string
	logPath         string // hookrelay's own output (stdout and stderr)
	cmd             *exec.Cmd
	done            chan struct{}
	startup         time.Duration
}

// startDev builds hookrelay and runs `hookrelay dev` until the API is ready.
func startDev(b *testing.B) *devServer {
	root, err := devenv.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	// Under /tmp itself, not b.TempDir: PostgreSQL runs as its own user
	// and must traverse every parent directory.
	dir, err := os.MkdirTemp("", "hookrelay-bench-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		b.Fatal(err)
	}
	benchDir = dir
	bin := buildHookrelay(b, root, dir)
	d := &devServer{dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "hookrelay.log"), done: make(chan struct{})}
	env, err := d.env()
	if err != nil {
		b.Fatal(err)
	}
	logFile, err := os.Create(d.logPath)
	if err != nil {
		b.Fatal(err)
	}
	d.cmd = exec.Command(bin, "dev")
	d.cmd.Dir, d.cmd.Env, d.cmd.Stdout, d.cmd.Stderr = root, env, logFile, logFile
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
	begin := time.Now()
	if err := d.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { _ = d.cmd.Wait(); _ = logFile.Close(); close(d.done) }()
	b.Cleanup(func() { d.stop(); _ = os.RemoveAll(dir) })
	if err := devenv.WaitReady(d.api+"/readyz", 3*time.Minute, d.done); err != nil {
		b.Fatalf("hookrelay dev: %v\n%s", err, d.logTail(30))
	}
	d.startup = time.Since(begin)
	return d
}

// buildHookrelay builds the hookrelay binary of the tree at root (or of
// HOOKRELAY_BENCH_SOURCE, another checkout) into dir.
func buildHookrelay(b *testing.B, root, dir string) string {
	bin := filepath.Join(dir, "hookrelay")
	build := exec.Command("go", "build", "-o", bin, "./cmd/hookrelay")
	build.Dir = root
	if src := os.Getenv("HOOKRELAY_BENCH_SOURCE"); src != "" {
		// Another checkout (an earlier commit, say) measured by this
		// harness: before and after, counted the same way.
		build.Dir = src
	}
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build hookrelay: %v\n%s", err, out)
	}
	return bin
}

// benchMetricsToken lets the benchmark read the API's /metrics.
const benchMetricsToken = "bench-metrics-token"

// env is the environment of `hookrelay dev`: the bench's own, without a
// DATABASE_URL (dev starts its own cluster), with free ports and the data dir.
func (d *devServer) env() ([]string, error) {
	ports := make([]int, 5)
	for i := range ports {
		p, err := devenv.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	d.api = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	d.temporal = "127.0.0.1:" + strconv.Itoa(ports[1])
	d.pgURL = "postgres://hookrelay@127.0.0.1:" + strconv.Itoa(ports[2]) + "/hookrelay?sslmode=disable"
	d.temporalMetrics = "http://127.0.0.1:" + strconv.Itoa(ports[4]) + "/metrics"
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "HOOKRELAY_") &&
			!strings.HasPrefix(kv, "TEMPORAL_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"HOOKRELAY_DATA_DIR="+d.dataDir,
		"HOOKRELAY_HTTP_ADDR="+d.api[len("http://"):],
		"TEMPORAL_ADDRESS="+d.temporal,
		"HOOKRELAY_PG_PORT="+strconv.Itoa(ports[2]),
		"HOOKRELAY_TEMPORAL_UI_PORT="+strconv.Itoa(ports[3]),
		"HOOKRELAY_METRICS_TOKEN="+benchMetricsToken,
		"HOOKRELAY_TEMPORAL_METRICS_PORT="+strconv.Itoa(ports[4]),
	), nil
}

// stop sends Ctrl-C (SIGINT), as a user would, and waits for every process
// to stop; SIGKILL after a minute.
func (d *devServer) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case <-d.done:
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// logTail is the last n lines of hookrelay's output.
func (d *devServer) logTail(n int) string {
	data, _ := os.ReadFile(d.logPath)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// logLines counts the lines of hookrelay's output holding msg=<msg> and
// returns the last of them.
func (d *devServer) logLines(msg string) (int, string) {
	data, _ := os.ReadFile(d.logPath)
	n, last := 0, ""
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte("msg="+msg)) {
			n, last = n+1, string(line)
		}
	}
	return n, last
}
