package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/testenv"
)

// publishWithKey publishes one event with an Idempotency-Key header.
func publishWithKey(e http.Handler, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(`{"type": "pg.down"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderIdempotencyKey, key)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// TestPublishWhilePostgresIsDown: issue 14. With PostgreSQL stopped, a
// publish answers 503 with Retry-After and the JSON shape (not 500); once
// it is back, retrying with the same Idempotency-Key publishes the event
// once.
func TestPublishWhilePostgresIsDown(t *testing.T) {
	t.Parallel()
	pg, cfg, st := testenv.OwnPostgres(t)
	e := validated(t, &Server{Store: st, Temporal: testenv.Client(t), Logger: testenv.Logger(), Auth: Auth{Open: true},
		Egress: testenv.Egress(), Starter: testenv.Starter(t, testenv.Client(t), st)})
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	rec := publishWithKey(e, "key-1")
	t.Logf("503 answered in %v with PostgreSQL down", time.Since(begin)) // a figure, not an assertion
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" ||
		!strings.Contains(rec.Body.String(), `"code":"unavailable"`) {
		t.Fatalf("publish with PostgreSQL down: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if _, err := devenv.StartPostgres(context.Background(), cfg, testenv.Logger()); err != nil {
		t.Fatal(err)
	}
	first, again := publishWithKey(e, "key-1"), publishWithKey(e, "key-1")
	if first.Code != http.StatusAccepted || again.Code != http.StatusOK || !strings.Contains(again.Body.String(), `"duplicate":true`) {
		t.Fatalf("after the restart: %d %s, then %d %s", first.Code, first.Body, again.Code, again.Body)
	}
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM events WHERE external_id = 'key-1'`); err != nil || n != 1 {
		t.Fatalf("%d events with the key (%v), want 1", n, err)
	}
}

// TestIdempotencyKeyHeader: the header is the event's id; it must agree with
// a body id, and be printable.
func TestIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), testenvClient(t))
	for _, c := range []struct{ key, body string }{
		{"a", `{"type": "t", "id": "b"}`},
		{"a\x7f", `{"type": "t"}`},
		{strings.Repeat("k", 201), `{"type": "t"}`},
	} {
		req := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(HeaderIdempotencyKey, c.key)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"Idempotency-Key"`) {
			t.Errorf("key %.20q with %s: %d %s", c.key, c.body, rec.Code, rec.Body)
		}
	}
	if rec := publishWithKey(e, "same"); rec.Code != http.StatusAccepted || !strings.Contains(rec.Body.String(), `"id":"same"`) {
		t.Fatalf("publish with a key: %d %s", rec.Code, rec.Body)
	}
}
