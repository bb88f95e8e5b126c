package starter

import (
	"context"
	"time"
)

// Every calls fn every interval until ctx ends: the loop of the sweeper and
// of the worker's periodic reports and pruning.
func Every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn(ctx)
	}
}
