// Package results writes and reads the data files of the benchmarks and
// the reliability suites: one JSON line per phase (a benchmark's phase, a
// chaos scenario, a cluster failure), appended to the file
// HOOKRELAY_RESULTS names. BENCHMARKS.md's and RELIABILITY.md's tables are
// made from one such file by `go run ./bench/report`
// (docs/benchmarks.md#results-as-data).
package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Variable names the data file a suite appends its lines to; unset, no
// suite writes one. The Makefile's bench, chaos and test-cluster targets
// set it.
const Variable = "HOOKRELAY_RESULTS"

// The suites, each one command.
const (
	SuiteBenchDev     = "bench-dev"     // make bench-dev: BenchmarkShipped
	SuiteBenchCluster = "bench-cluster" // make bench-cluster: BenchmarkCluster
	SuiteChaos        = "chaos"         // make chaos
	SuiteCluster      = "cluster"       // make test-cluster
)

// Line is one phase of one run of a suite. The lines of one run share
// Suite and Started; Figures are numbers (milliseconds, seconds and
// counts, named by their keys), Notes anything else the tables show.
type Line struct {
	Suite   string             `json:"suite"`
	Started time.Time          `json:"started"`
	Commit  string             `json:"commit"`
	Machine string             `json:"machine"`
	Phase   string             `json:"phase"`
	Figures map[string]float64 `json:"figures"`
	Notes   map[string]string  `json:"notes,omitempty"`
}

// Writer appends one run's lines to a data file; a nil Writer (no
// HOOKRELAY_RESULTS) writes nothing.
type Writer struct {
	mu      sync.Mutex
	path    string
	suite   string
	started time.Time
	commit  string
	machine string
}

// Open starts a run of suite, to be written to the file HOOKRELAY_RESULTS
// names (made if missing, appended to); it is nil when the variable is
// unset. The commit is the working tree's (`git describe --always
// --dirty`).
func Open(suite string) *Writer {
	path := os.Getenv(Variable)
	if path == "" {
		return nil
	}
	return &Writer{path: path, suite: suite, started: time.Now().UTC().Truncate(time.Second),
		commit: Commit(), machine: Machine()}
}

// Add appends one line for phase; nil maps are written as empty ones.
func (w *Writer) Add(phase string, figures map[string]float64, notes map[string]string) error {
	if w == nil {
		return nil
	}
	if figures == nil {
		figures = map[string]float64{}
	}
	b, err := json.Marshal(Line{Suite: w.suite, Started: w.started, Commit: w.commit, Machine: w.machine,
		Phase: phase, Figures: figures, Notes: notes})
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("results: %w", err)
	}
	return f.Close()
}

// Read reads a data file's lines, in the file's order.
func Read(path string) ([]Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []Line
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if l.Suite == "" || l.Phase == "" {
			return nil, fmt.Errorf("%s:%d: a line without its suite or phase", path, n)
		}
		lines = append(lines, l)
	}
	return lines, sc.Err()
}

// Latest is the lines of suite's latest run in lines (the latest Started),
// in their order; none when the suite did not run.
func Latest(lines []Line, suite string) []Line {
	var last time.Time
	for _, l := range lines {
		if l.Suite == suite && l.Started.After(last) {
			last = l.Started
		}
	}
	var out []Line
	for _, l := range lines {
		if l.Suite == suite && l.Started.Equal(last) {
			out = append(out, l)
		}
	}
	return out
}

// ErrNoPhase is returned by Find for a phase the lines do not hold.
var ErrNoPhase = errors.New("results: no such phase")

// Find is the line of phase in lines.
func Find(lines []Line, phase string) (Line, error) {
	for _, l := range lines {
		if l.Phase == phase {
			return l, nil
		}
	}
	return Line{}, fmt.Errorf("%w: %q", ErrNoPhase, phase)
}

// Machine describes this machine: cores, CPU model, memory, OS and
// architecture.
func Machine() string {
	model := "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		first, _, _ := strings.Cut(string(data), "\n")
		mem = ", " + strings.Join(strings.Fields(first), " ")
	}
	return fmt.Sprintf("nproc %d, CPU %q%s, %s/%s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH)
}

// Commit is the working tree's commit as `git describe --always --dirty`
// gives it, or "unknown" outside a checkout.
func Commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
