package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestListEvents: issue 16. GET /v1/events lists the account's events oldest
// first, without their data, filtered by type and creation time, a bounded
// page at a time with a cursor; bad filters are a 400 naming the parameter.
func TestListEvents(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), testenvClient(t))
	var want []string
	for _, id := range []string{"le-1", "le-2", "le-3", "le-4", "le-5"} {
		typ := "le.a"
		if id == "le-2" || id == "le-4" {
			typ = "le.b"
		}
		if code, _ := call(t, e, http.MethodPost, "/v1/events", `{"id": "`+id+`", "type": "`+typ+`", "data": {"n": 1}}`); code != http.StatusAccepted {
			t.Fatalf("publish %s: %d", id, code)
		}
		want = append(want, id)
	}
	if got := eventPages(t, e, "limit=2", 3); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("pages of 2: %v, want %v", got, want)
	}
	if got := eventPages(t, e, "limit=1&type=le.b", 3); strings.Join(got, ",") != "le-2,le-4" {
		t.Fatalf("type le.b: %v", got)
	}
	future := url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
	past := url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339))
	counts := map[string]int{"since=" + future: 0, "until=" + future: 5, "until=" + past: 0,
		"since=" + past + "&type=le.a": 3, "type=nope": 0}
	for q, n := range counts {
		_, page := call(t, e, http.MethodGet, "/v1/events?"+q, "")
		if got := len(page["events"].([]any)); got != n {
			t.Errorf("GET /v1/events?%s: %d events, want %d", q, got, n)
		}
	}
	_, page := call(t, e, http.MethodGet, "/v1/events?limit=1", "")
	if ev := page["events"].([]any)[0].(map[string]any); ev["id"] != "le-1" || ev["type"] != "le.a" || ev["data"] != nil {
		t.Errorf("listed event: %v", ev)
	}
	bad := map[string]string{"limit=0": "limit", "limit=1001": "limit", "since=yesterday": "since",
		"until=2026-13-01": "until", "type=" + strings.Repeat("x", 201): "type"}
	for q, field := range bad {
		if code, got := call(t, e, http.MethodGet, "/v1/events?"+q, ""); code != http.StatusBadRequest || jpath(got, "error", "field") != field {
			t.Errorf("?%s: %d %v, want 400 naming %s", q, code, got, field)
		}
	}
}

// eventPages follows the cursor of GET /v1/events?q from the first page to
// the last, which must be the pages-th, and returns the events' ids.
func eventPages(t *testing.T, e *echo.Echo, q string, pages int) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for n := 1; ; n++ {
		code, page := call(t, e, http.MethodGet, "/v1/events?"+q+"&cursor="+cursor, "")
		if code != http.StatusOK || n > pages {
			t.Fatalf("page %d of ?%s: %d %v", n, q, code, page)
		}
		for _, ev := range page["events"].([]any) {
			ids = append(ids, ev.(map[string]any)["id"].(string))
		}
		if cursor, _ = page["next_cursor"].(string); cursor == "" {
			if n != pages {
				t.Fatalf("?%s: %d pages, want %d", q, n, pages)
			}
			return ids
		}
	}
}
