package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/client"
	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/testenv/testapi"
)

// recorder is an http.RoundTripper that notes each answer's status and the
// Idempotency-Key its request sent.
type recorder struct {
	mu    sync.Mutex
	tries []try
}

type try struct {
	status int
	key    string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.tries = append(r.tries, try{resp.StatusCode, req.Header.Get("Idempotency-Key")})
		r.mu.Unlock()
	}
	return resp, err
}

func (r *recorder) seen() []try {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]try(nil), r.tries...)
}

// TestPublishRetriesWhileUnavailable: issue 24. With the API's PostgreSQL
// stopped, the API answers 503 with Retry-After; Publish tries again, with
// the same Idempotency-Key, at most MaxPublishAttempts times, then returns
// the API's error. Started again while it is down, Publish keeps trying
// until PostgreSQL is back, and the event is stored once.
func TestPublishRetriesWhileUnavailable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, cfg, st := testenv.OwnPostgres(t)
	url := testapi.Serve(t, st, testenv.Client(t), nil)
	rec := &recorder{}
	c := accountClient(ctx, t, url, client.WithHTTPClient(&http.Client{Transport: rec}))
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	c.MaxPublishAttempts = 2
	_, err := c.Publish(ctx, client.EventRequest{Type: "pg.down"})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable || apiErr.Code != "unavailable" {
		t.Fatalf("Publish with PostgreSQL down: %v, want the API's 503", err)
	}
	if tries := rec.seen(); len(tries) != 2 || tries[0].key == "" || tries[1].key != tries[0].key {
		t.Fatalf("tries %v, want 2 with one key", tries)
	}
	c.MaxPublishAttempts = 1000 // ctx bounds it
	done := make(chan *client.PublishEventResponse, 1)
	go func() {
		res, err := c.Publish(ctx, client.EventRequest{Type: "pg.down"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for len(rec.seen()) < 3 {
		if ctx.Err() != nil {
			t.Fatal("the second Publish made no try")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := devenv.StartPostgres(ctx, cfg, testenv.Logger()); err != nil {
		t.Fatal(err)
	}
	res := <-done
	tries := rec.seen()[2:]
	last := tries[len(tries)-1]
	if res == nil || res.StatusCode() != http.StatusAccepted || last.status != http.StatusAccepted || tries[0].status != http.StatusServiceUnavailable {
		t.Fatalf("tries %v, answer %v", tries, res)
	}
	for _, tr := range tries {
		if tr.key != res.Result().ID {
			t.Fatalf("tries %v: not all with the event's id %q as key", tries, res.Result().ID)
		}
	}
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM events WHERE external_id = $1`, res.Result().ID); err != nil || n != 1 {
		t.Fatalf("%d events with the key (%v), want 1", n, err)
	}
}
