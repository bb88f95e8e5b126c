package devenv

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestRetryEarlyExit checks that StartTemporal launches again a server that
// exited before answering, up to its tries, and nothing else.
func TestRetryEarlyExit(t *testing.T) {
	early := fmt.Errorf("start temporal: %w: exit status 2", errExitedEarly)
	other := errors.New("start temporal: wait for frontend: context deadline exceeded")
	cases := []struct {
		name    string
		results []error // what each launch returns, in turn
		tries   int     // launches wanted
		want    error
	}{
		{"up at once", []error{nil}, 1, nil},
		{"up after an early exit", []error{early, nil}, 2, nil},
		{"early exits every time", []error{early, early, early, nil}, 3, errExitedEarly},
		{"another failure", []error{other, nil}, 1, other},
	}
	for _, c := range cases {
		tries, retried := 0, 0
		_, err := retryEarlyExit(3, func() (*Temporal, error) {
			err := c.results[tries]
			tries++
			return nil, err
		}, func(error) { retried++ })
		if tries != c.tries || retried != c.tries-1 || !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %d launches (%d retried), error %v; want %d launches, error %v", c.name, tries, retried, err, c.tries, c.want)
		}
	}
}

// TestTemporalPortTaken starts the real dev server on a frontend port
// another listener holds: it exits before answering, and StartTemporal
// launches it temporalStartTries times, then says so.
func TestTemporalPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := headlessConfig(t)
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	cfg.DBFile = filepath.Join(t.TempDir(), "temporal.db") // its log beside it, removed with it
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&log, nil))
	tmp, err := StartTemporal(t.Context(), cfg, logger)
	if errors.Is(err, ErrNotInstalled) {
		skipIfNotInstalled(t, err)
	}
	if err == nil {
		_ = tmp.Stop()
		t.Fatal("the dev server started on a port another listener holds")
	}
	if !errors.Is(err, errExitedEarly) {
		t.Fatalf("error %v; want the server's early exit", err)
	}
	if n := strings.Count(log.String(), "temporal_exited_at_start"); n != temporalStartTries-1 {
		t.Errorf("%d launches retried; want %d\n%s", n, temporalStartTries-1, log.String())
	}
}
