package api

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestPublishAnswersBeforeStart: with a start queue, publishing answers once
// the event and its deliveries are stored, before any workflow starts (here
// the queue is not even running yet); GET /v1/backlog shows them pending and
// unstarted. Once the queue runs, they are delivered and the backlog empties.
func TestPublishAnswersBeforeStart(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	srv := &Server{Store: st, Temporal: c, Logger: testenv.Logger(), Auth: Auth{Open: true}, Egress: testenv.Egress(), Starter: testenv.Starter(t, c, st)}
	srv.StartQueue = &starter.Queue{Starter: srv.Starter}
	e := New(srv)
	rcv := newReceiver(t)
	for i := range 3 {
		body := mustJSON(t, map[string]any{"url": fmt.Sprintf("%s/h%d", rcv.URL, i), "event_types": []string{"q.created"}, "policy": "eventgrid"})
		if code, sub := call(t, e, http.MethodPost, "/v1/subscriptions", body); code != http.StatusCreated {
			t.Fatalf("subscribe: %d %v", code, sub)
		}
	}
	code, body := call(t, e, http.MethodPost, "/v1/events", `{"id":"q-1","type":"q.created"}`)
	if ds, _ := body["deliveries"].([]any); code != http.StatusAccepted || len(ds) != 3 {
		t.Fatalf("publish: %d %v", code, body)
	}
	code, backlog := call(t, e, http.MethodGet, "/v1/backlog", "")
	if code != http.StatusOK || backlog["pending"] != float64(3) || backlog["unstarted"] != float64(3) || backlog["oldest_pending_at"] == nil {
		t.Fatalf("backlog before the queue runs: %d %v", code, backlog)
	}
	runWorker(t, st, c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.StartQueue.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "all delivered", time.Minute, func() bool {
		_, b := call(t, e, http.MethodGet, "/v1/backlog", "")
		return b["pending"] == float64(0) && len(rcv.received()) == 3
	})
	if _, b := call(t, e, http.MethodGet, "/v1/backlog", ""); b["lag_seconds"] != float64(0) || b["oldest_pending_at"] != nil {
		t.Errorf("empty backlog: %v", b)
	}
}
