package bench

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// phasedReceiver answers 503 for the last failFor of every failPeriod after
// start, 204 otherwise, and always 204 once healed.
type phasedReceiver struct {
	start  atomic.Int64 // unix nanoseconds
	healed atomic.Bool
}

func (r *phasedReceiver) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	since := time.Duration(time.Now().UnixNano() - r.start.Load())
	if !r.healed.Load() && since%failPeriod >= failPeriod-failFor {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// signalCounter is a slog handler that counts what the Deliver activity logs
// about signalling the endpoint workflow (it logs and swallows errors).
type signalCounter struct{ sent, failed atomic.Int64 }

func (s *signalCounter) Enabled(context.Context, slog.Level) bool { return true }
func (s *signalCounter) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *signalCounter) WithGroup(string) slog.Handler            { return s }

func (s *signalCounter) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "endpoint_signalled":
		s.sent.Add(1)
	case "endpoint_signal_failed":
		s.failed.Add(1)
	}
	return nil
}
