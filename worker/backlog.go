package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
)

// backlogEvery is how often the worker reads the delivery backlog.
const backlogEvery = 10 * time.Second

// backlogWorthReporting is the lag from which the backlog is logged.
const backlogWorthReporting = 5 * time.Second

// reportBacklog logs, every backlogEvery until ctx ends, the deliveries still
// waiting for their first attempt's outcome and the age of the oldest, when
// that lag is over backlogWorthReporting: overload shows in the log as it
// shows in GET /v1/backlog.
func reportBacklog(ctx context.Context, st *store.Store, logger *slog.Logger) {
	starter.Every(ctx, backlogEvery, func(ctx context.Context) {
		b, err := st.TotalBacklog(ctx)
		if err != nil {
			if ctx.Err() == nil {
				logger.ErrorContext(ctx, "backlog_read_failed", "error", err)
			}
			return
		}
		if lag := time.Duration(b.LagSeconds * float64(time.Second)); lag > backlogWorthReporting {
			logger.WarnContext(ctx, "delivery_backlog", "pending", b.Pending, "unstarted", b.Unstarted,
				"lag", lag.Round(time.Millisecond))
		}
	})
}
