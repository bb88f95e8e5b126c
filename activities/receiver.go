package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// maxRetryAfter bounds a parsed Retry-After before the policy's own bound
// applies (policies.RetryAfterDue), so that no value overflows.
const maxRetryAfter = 7 * 24 * time.Hour

// retryAfter is the wait a 429 or 503 answer asks for with Retry-After, in
// seconds or as an HTTP date (RFC 9110 §10.2.3), from now; zero for any other
// answer, or a missing, past or malformed value.
func retryAfter(status int, h http.Header, now time.Time) time.Duration {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return 0
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		d = time.Duration(min(secs, uint64(maxRetryAfter/time.Second))) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// errThrottled is send's answer when the endpoint's limits leave no room for
// the attempt now: no request was made and nothing was recorded.
type errThrottled struct{ retryIn time.Duration }

func (e errThrottled) Error() string {
	return fmt.Sprintf("endpoint limits: no room for another attempt (retry in %v)", e.retryIn)
}

// throttled is the result telling the workflow an attempt was held back.
func throttled(err error) (workflows.DeliverResult, bool) {
	var t errThrottled
	if !errors.As(err, &t) {
		return workflows.DeliverResult{}, false
	}
	return workflows.DeliverResult{Throttled: true, RetryIn: t.retryIn}, true
}

// leaseFor takes a slot under the endpoint's concurrency cap and rate limit,
// when it has any and the workflow understands a held-back attempt. The
// returned release gives it back (a no-op when none was taken); a lease
// that is never released ends with the attempt's longest possible run.
func (a *Activities) leaseFor(ctx context.Context, t store.Target, in workflows.DeliverInput) (func(), error) {
	if !in.MayThrottle || !t.Limits.Limited() {
		return func() {}, nil
	}
	holder := in.DeliveryID + "/" + strconv.Itoa(in.Attempt)
	wait, ok, err := a.Store.Acquire(ctx, t.EndpointID, holder, in.Timeout+time.Minute)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errThrottled{retryIn: wait}
	}
	return func() {
		// The attempt is over whatever its context says: release it on its own.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := a.Store.Release(ctx, t.EndpointID, holder); err != nil {
			a.Logger.WarnContext(ctx, "lease_release_failed", "endpoint_id", t.EndpointID, "error", err)
		}
	}, nil
}
