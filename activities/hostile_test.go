package activities_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// hostileAttempt makes one attempt of a delivery to h (with timeout) and
// returns the attempt recorded.
func hostileAttempt(t *testing.T, h http.HandlerFunc, timeout time.Duration) store.Attempt {
	t.Helper()
	st := testenv.Store(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	d := deliveryTo(t, st, srv.URL)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	if _, err := acts.Deliver(context.Background(), workflows.DeliverInput{DeliveryID: d.ID,
		ScheduledAt: time.Now(), Timeout: timeout}); err != nil {
		t.Fatal(err)
	}
	as, err := st.Attempts(context.Background(), d.ID)
	if err != nil || len(as) != 1 {
		t.Fatalf("attempts %+v (%v)", as, err)
	}
	return as[0]
}

// TestTricklingBodyIsATimeout: a 200 whose body is still arriving when the
// attempt's timeout ends is a timeout, not a success (issue 10).
func TestTricklingBodyIsATimeout(t *testing.T) {
	t.Parallel()
	a := hostileAttempt(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for i := 0; i < 50; i++ {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}, 500*time.Millisecond)
	if a.Success || a.ErrorKind != workflows.KindTimeout {
		t.Fatalf("trickling body recorded as success=%v kind=%q (%s), want a timeout", a.Success, a.ErrorKind, a.ErrorMessage)
	}
}

// TestHugeHeadersAreNotKept: a response header over the client's limit fails
// the attempt and nothing of it is kept; headers under the limit but over
// the budget are kept up to the budget, marked as cut (issue 10).
func TestHugeHeadersAreNotKept(t *testing.T) {
	t.Parallel()
	huge := hostileAttempt(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Huge", strings.Repeat("a", 9<<20))
		w.WriteHeader(http.StatusInternalServerError)
	}, 5*time.Second)
	if huge.Success || huge.StatusCode != 0 || len(huge.ResponseHeaders) > activities.HeaderBudget {
		t.Fatalf("9 MB header: status %d, %d bytes of headers kept", huge.StatusCode, len(huge.ResponseHeaders))
	}
	big := hostileAttempt(t, func(w http.ResponseWriter, _ *http.Request) {
		for _, k := range []string{"X-A", "X-B", "X-C"} {
			w.Header().Set(k, strings.Repeat("<", 5000))
		}
		w.WriteHeader(http.StatusOK)
	}, 5*time.Second)
	h := string(big.ResponseHeaders)
	if !big.Success || len(h) > activities.HeaderBudget+200 || !strings.Contains(h, activities.TruncatedMarker) {
		t.Fatalf("15 KB of headers: %d bytes kept, marker %v", len(h), strings.Contains(h, activities.TruncatedMarker))
	}
}
