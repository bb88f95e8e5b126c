package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestStatementPreparedOnce: many callers asking at once for a statement
// not yet prepared get it prepared once. A second preparation would have
// to be closed, and closing it waits for the connection it was prepared
// on to finish whatever query it runs next, which may wait on a lock for
// as long as another transaction lasts (the first attempt that hung
// behind activities.Later's write did).
func TestStatementPreparedOnce(t *testing.T) {
	t.Parallel()
	st, ctx := testenv.Store(t), context.Background()
	var prepares atomic.Int64
	store.CountPrepares(st, &prepares)
	const callers = 64
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := st.MarkStarted(ctx, []string{"dlv_none"}); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := prepares.Load(); n != 1 {
		t.Errorf("%d preparations for %d callers at once, want 1", n, callers)
	}
}
