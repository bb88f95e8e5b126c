package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
)

// pruneEvery is how often the worker deletes expired endpoint buckets.
const pruneEvery = time.Hour

// pruneBuckets deletes the endpoint buckets older than store.BucketRetention
// at once and every pruneEvery until ctx ends.
func pruneBuckets(ctx context.Context, st *store.Store, logger *slog.Logger) {
	prune := func(ctx context.Context) {
		n, err := st.PruneBuckets(ctx, time.Now().Add(-store.BucketRetention))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.ErrorContext(ctx, "prune_buckets_failed", "error", err)
		case n > 0:
			logger.InfoContext(ctx, "buckets_pruned", "count", n)
		}
	}
	prune(ctx)
	starter.Every(ctx, pruneEvery, prune)
}
