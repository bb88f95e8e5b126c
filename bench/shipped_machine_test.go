package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hookrelay/hookrelay/bench/results"
)

// machine describes the computer: CPUs, model and memory (as the data
// file's lines do).
func machine() string { return results.Machine() }

// procSample is one process's CPU time (ticks) at a moment.
type procSample struct {
	comm       string
	ppid       int
	ticks      int64
	pid        int
	withinOurs bool
}

// readProcs reads every process's name, parent and CPU ticks from /proc.
func readProcs() map[int]procSample {
	out := map[int]procSample{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range dirs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(data)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		ppid, _ := strconv.Atoi(f[1])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = procSample{comm: s[open+1 : end], ppid: ppid, ticks: ut + st, pid: pid}
	}
	return out
}

// benchDir is the directory of the dev server this benchmark started; its
// PostgreSQL (which detaches from its parent) names it on its command line.
// peerDir is the peer's (peer_test.go), whose processes detach too.
var benchDir, peerDir string

// ours reports whether pid is this benchmark, one of its descendants (the
// dev server, Temporal) or a process under one whose command line names
// benchDir (PostgreSQL) or peerDir (the peer's processes).
func ours(procs map[int]procSample, pid int) bool {
	self := os.Getpid()
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == self {
			return true
		}
		if namesOurDir(pid) {
			return true
		}
		pid = procs[pid].ppid
	}
	return false
}

// machineLoad is the load average and the processes that used the most CPU
// over the next 2 seconds, each marked as ours (this benchmark and what it
// started) or other (everything else on the machine).
func machineLoad() string {
	before := readProcs()
	time.Sleep(2 * time.Second)
	after := readProcs()
	var top []procSample
	for pid, a := range after {
		a.ticks -= before[pid].ticks
		a.withinOurs = ours(after, pid)
		if a.ticks > 0 {
			top = append(top, a)
		}
	}
	sort.Slice(top, func(i, j int) bool { return top[i].ticks > top[j].ticks })
	var b strings.Builder
	var otherTicks int64
	for i, p := range top {
		if !p.withinOurs {
			otherTicks += p.ticks
		}
		if i < 6 {
			who := "other"
			if p.withinOurs {
				who = "ours"
			}
			fmt.Fprintf(&b, "%s %d%% (%s); ", p.comm, p.ticks/2, who) // 100 ticks a second, over 2 s: % of one core
		}
	}
	return fmt.Sprintf("loadavg %s; others' processes %.2f cores; top: %s", loadavg(), float64(otherTicks)/200,
		strings.TrimSuffix(b.String(), "; "))
}

// Settling before a phase.
const (
	// idleCores is the CPU our processes use, at most, when idle: the
	// servers' own polling and timers.
	idleCores = 0.2
	// settleLimit bounds the wait for them to be idle.
	settleLimit = time.Minute
)

// settle waits, up to settleLimit, until our processes (the benchmark, the
// servers and what they run) have used less than idleCores over a second,
// so that a phase does not pay for the tail of the one before it (the
// baseline's last activity tasks, workflow tasks and visibility records
// run on after its last receipt). It says how long it waited.
func settle() string {
	begin := time.Now()
	for time.Since(begin) < settleLimit {
		before := readProcs()
		time.Sleep(time.Second)
		after := readProcs()
		var ticks int64
		for pid, a := range after {
			if d := a.ticks - before[pid].ticks; d > 0 && ours(after, pid) {
				ticks += d
			}
		}
		if float64(ticks)/100 < idleCores {
			return fmt.Sprintf("idle after %.0fs", time.Since(begin).Seconds())
		}
	}
	return fmt.Sprintf("still busy after %.0fs", settleLimit.Seconds())
}

// loadavg is /proc/loadavg's first three fields.
func loadavg() string {
	f, err := os.Open("/proc/loadavg")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	fields := strings.Fields(sc.Text())
	if len(fields) < 3 {
		return "?"
	}
	return strings.Join(fields[:3], " ")
}

// cpuSnapshot is the CPU ticks of every process at a moment.
type cpuSnapshot map[int]procSample

func takeCPU() cpuSnapshot { return cpuSnapshot(readProcs()) }

// cpuPer describes the CPU our processes used since s, grouped by process
// name, in milliseconds per item (a delivery), and the cores everything used
// over the span: where the time of a saturated phase went.
func (s cpuSnapshot) cpuPer(items int, span time.Duration) string {
	now := readProcs()
	byName, others := map[string]int64{}, int64(0)
	for pid, p := range now {
		d := p.ticks - s[pid].ticks
		if d <= 0 {
			continue
		}
		if ours(now, pid) {
			byName[p.comm] += d
		} else {
			others += d
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return byName[names[i]] > byName[names[j]] })
	var b strings.Builder
	var total int64
	for _, n := range names {
		total += byName[n]
		fmt.Fprintf(&b, "%s %.1f ms (%.2f cores); ", n, float64(byName[n])*10/float64(max(items, 1)), float64(byName[n])/100/span.Seconds())
	}
	return fmt.Sprintf("CPU per delivery: %stotal %.1f ms; others' processes %.2f cores", b.String(),
		float64(total)*10/float64(max(items, 1)), float64(others)/100/span.Seconds())
}

// namesOurDir reports whether pid's command line names benchDir or peerDir.
func namesOurDir(pid int) bool {
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	for _, dir := range []string{benchDir, peerDir} {
		if dir != "" && strings.Contains(string(cmd), dir) {
			return true
		}
	}
	return false
}
