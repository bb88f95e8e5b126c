package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
)

// pruneEvery is how often the worker deletes expired endpoint buckets and
// what its retention is over.
const pruneEvery = time.Hour

// prune runs Prune at once and every pruneEvery until ctx ends.
func prune(ctx context.Context, st *store.Store, logger *slog.Logger, opts Options) {
	run := func(ctx context.Context) { Prune(ctx, st, logger, opts) }
	run(ctx)
	starter.Every(ctx, pruneEvery, run)
}

// Prune is one round of the worker's pruning: it deletes the endpoint
// buckets older than store.BucketRetention, then what finished longer ago
// than opts.Retention and the dead letters older than
// opts.DeadLetterRetention (store.Prune), and reports what it deleted in a
// log line and the metrics.
func Prune(ctx context.Context, st *store.Store, logger *slog.Logger, opts Options) {
	n, err := st.PruneBuckets(ctx, time.Now().Add(-store.BucketRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		logger.ErrorContext(ctx, "prune_buckets_failed", "error", err)
	case n > 0:
		logger.InfoContext(ctx, "buckets_pruned", "count", n)
	}
	r := store.Retention{Finished: cutoff(opts.Retention), DeadLetters: cutoff(opts.DeadLetterRetention)}
	if r.Finished.IsZero() && r.DeadLetters.IsZero() {
		return
	}
	p, err := st.Prune(ctx, r)
	if err != nil && ctx.Err() == nil {
		logger.ErrorContext(ctx, "retention_failed", "error", err)
	}
	reportPruned(ctx, logger, opts, p)
}

// cutoff is the time before which what is kept for keep goes; zero (keep
// forever) when keep is not positive.
func cutoff(keep time.Duration) time.Time {
	if keep <= 0 {
		return time.Time{}
	}
	return time.Now().Add(-keep)
}

// reportPruned logs and counts what retention deleted, if anything.
func reportPruned(ctx context.Context, logger *slog.Logger, opts Options, p store.Pruned) {
	if p.Total() == 0 {
		return
	}
	counts := []struct {
		table string
		n     int64
	}{{"dead_letters", p.DeadLetters}, {"deliveries", p.Deliveries}, {"attempts", p.Attempts},
		{"eventgrid_batches", p.Batches}, {"events", p.Events}}
	args := make([]any, 0, 2*len(counts))
	for _, c := range counts {
		args = append(args, c.table, c.n)
		opts.Metrics.Pruned(c.table, c.n)
	}
	logger.InfoContext(ctx, "retention_pruned", args...)
}
