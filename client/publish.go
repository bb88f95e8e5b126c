package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Publish publishes ev (POST /v1/events) once, however often it has to
// try. Its idempotency key is ev.ID, or, when that is empty, a random one
// Publish makes up (the answer's id); every try sends it as the
// Idempotency-Key header, so the API stores the event once and a try after
// a lost answer gets the first publication's deliveries back (Duplicate).
//
// Publish tries again, up to MaxPublishAttempts tries in all, when the API
// answers 503 (PostgreSQL or Temporal unavailable) or 429, waiting what
// its Retry-After says (at most MaxRetryWait; 1 second without one), and
// when no answer came at all. ctx bounds the whole. Any other answer that
// is not a 2xx is an *Error.
func (c *Client) Publish(ctx context.Context, ev EventRequest) (*PublishEventResponse, error) {
	if ev.ID == nil || *ev.ID == "" {
		key, err := newKey()
		if err != nil {
			return nil, err
		}
		ev.ID = &key
	}
	params := &PublishEventParams{IdempotencyKey: ev.ID}
	for try := 1; ; try++ {
		resp, err := c.PublishEventWithResponse(ctx, params, ev)
		wait, again := c.retryWait(ctx, resp, err)
		if !again || try >= c.maxAttempts() {
			return Check(resp, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// Result is the publication: the answer's 202 body, or 200's for a
// duplicate; nil for an answer that is neither.
func (r *PublishEventResponse) Result() *PublishResponse {
	if r.JSON202 != nil {
		return r.JSON202
	}
	return r.JSON200
}

func (c *Client) maxAttempts() int {
	if c.MaxPublishAttempts > 0 {
		return c.MaxPublishAttempts
	}
	return 5
}

// retryWait says whether a publish's answer (or its failure) is worth
// another try, and after how long.
func (c *Client) retryWait(ctx context.Context, resp *PublishEventResponse, err error) (time.Duration, bool) {
	if err != nil {
		return time.Second, ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	code := resp.StatusCode()
	if code != http.StatusServiceUnavailable && code != http.StatusTooManyRequests {
		return 0, false
	}
	limit := c.MaxRetryWait
	if limit <= 0 {
		limit = 30 * time.Second
	}
	return min(RetryAfter(resp.HTTPResponse.Header, time.Now()), limit), true
}

// RetryAfter is how long a Retry-After header asks to wait (in seconds or
// as an HTTP date, measured from now); 1 second when it is absent or
// unreadable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0)
	}
	return time.Second
}

// newKey is a random idempotency key.
func newKey() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "pub_" + hex.EncodeToString(b), nil
}
