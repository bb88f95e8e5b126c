package api

import (
	"net/http"
	"testing"
)

// TestListDeliveries: issue 16. GET /v1/deliveries lists the account's
// deliveries oldest first, filtered by status and subscription, a bounded
// page at a time with a cursor; bad filters are a 400 naming the parameter.
func TestListDeliveries(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), testenvClient(t))
	_, a := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "https://a.example/hook", "event_types": ["l.a"]}`)
	_, b := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "https://b.example/hook", "event_types": ["l.b"]}`)
	call(t, e, http.MethodPatch, "/v1/subscriptions/"+b["id"].(string), `{"active": false}`)
	for range 3 {
		call(t, e, http.MethodPost, "/v1/events", `{"type": "l.a"}`)
		call(t, e, http.MethodPost, "/v1/events", `{"type": "l.b"}`)
	}
	var ids []any
	for cursor := ""; ; {
		code, page := call(t, e, http.MethodGet, "/v1/deliveries?limit=2&subscription_id="+a["id"].(string)+"&cursor="+cursor, "")
		ds, _ := page["deliveries"].([]any)
		if code != http.StatusOK || len(ds) > 2 {
			t.Fatalf("page: %d %v", code, page)
		}
		ids = append(ids, ds...)
		if cursor, _ = page["next_cursor"].(string); cursor == "" {
			break
		}
	}
	if len(ids) != 3 {
		t.Fatalf("%d deliveries of subscription a over the pages, want 3", len(ids))
	}
	_, queued := call(t, e, http.MethodGet, "/v1/deliveries?status=queued", "")
	if ds := queued["deliveries"].([]any); len(ds) != 3 || ds[0].(map[string]any)["subscription_id"] != b["id"] {
		t.Fatalf("queued: %v", queued)
	}
	for q, field := range map[string]string{"status=lost": "status", "limit=0": "limit", "since=yesterday": "since"} {
		if code, got := call(t, e, http.MethodGet, "/v1/deliveries?"+q, ""); code != http.StatusBadRequest || jpath(got, "error", "field") != field {
			t.Errorf("?%s: %d %v, want 400 naming %s", q, code, got, field)
		}
	}
}
