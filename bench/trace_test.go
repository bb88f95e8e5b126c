package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// writeTrace writes, when HOOKRELAY_BENCH_TRACE names a directory, one line
// per receipt of a phase to <dir>/<phase>.tsv: when its publication was sent
// (ms after the phase's first), how long its answer took and how long until
// the receiver had it (ms). Sorted by the first column, it shows whether the
// slow deliveries of a phase are spread out or come together, as they do at
// the dev server's checkpoints (BENCHMARKS.md).
func writeTrace(name string, rcv *hitReceiver, shots []shot, first time.Time) {
	dir := os.Getenv("HOOKRELAY_BENCH_TRACE")
	if dir == "" {
		return
	}
	var b strings.Builder
	for _, s := range shots {
		for _, k := range s.keys {
			if at, ok := rcv.when(k); ok && s.err == nil {
				fmt.Fprintf(&b, "%.1f\t%.2f\t%.2f\n", millis(s.sent.Sub(first)), millis(s.answered.Sub(s.sent)), millis(at.Sub(s.sent)))
			}
		}
	}
	file := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_", "#", "").Replace(name)+".tsv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		fmt.Println("trace:", err)
	}
}

// millis is d in milliseconds.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
