package activities

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryAfter: Retry-After is read on 429 and 503 answers only, in
// seconds or as an HTTP date, never negative (issue 16).
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		status int
		value  string
		want   time.Duration
	}{
		{503, "3", 3 * time.Second},
		{429, "120", 2 * time.Minute},
		{503, now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{503, now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{503, "-5", 0},
		{503, "soon", 0},
		{503, "", 0},
		{503, "99999999999", maxRetryAfter},
		{500, "3", 0},
		{200, "3", 0},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.value != "" {
			h.Set("Retry-After", c.value)
		}
		if got := retryAfter(c.status, h, now); got != c.want {
			t.Errorf("%d Retry-After %q: %v, want %v", c.status, c.value, got, c.want)
		}
	}
}
