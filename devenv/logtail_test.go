package devenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLog writes lines to a file in t's temporary directory, after a line
// that stands for an earlier run's output.
func writeLog(t *testing.T, lines []string) (path string, from int64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "server.log")
	before := "panic: an earlier run\n"
	if err := os.WriteFile(path, []byte(before+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, int64(len(before))
}

func TestLogTailKeepsTheReasonOfAPanic(t *testing.T) {
	lines := []string{"starting", "panic: failed assigning ephemeral port: refused", "", "goroutine 1 [running]:"}
	for i := 0; i < 20; i++ {
		lines = append(lines, "frame")
	}
	path, from := writeLog(t, lines)
	got := strings.Split(logTail(path, from, 3), "\n")
	want := []string{"panic: failed assigning ephemeral port: refused", "...", "frame", "frame", "frame"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("logTail = %q, want %q", got, want)
	}
}

func TestLogTailOfAnOrdinaryLog(t *testing.T) {
	path, from := writeLog(t, []string{"one", "two", "three", "four"})
	if got := logTail(path, from, 2); got != "three\nfour" {
		t.Errorf("logTail = %q, want the last two lines", got)
	}
	if got := logTail(path, from, 10); got != "one\ntwo\nthree\nfour" {
		t.Errorf("logTail = %q, want every line of this run", got)
	}
	fatal, from := writeLog(t, []string{"fatal error: out of memory", "a", "b"})
	if got := logTail(fatal, from, 2); got != "fatal error: out of memory\n...\na\nb" {
		t.Errorf("logTail = %q, want the fatal error first", got)
	}
}
