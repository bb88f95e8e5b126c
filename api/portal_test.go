package api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPortalSessions: POST /v1/portal-sessions answers an account with a
// link to its portal and when the link expires (an hour by default); a
// scope naming what is not the account's, "*" or a lifetime out of range
// is a 400 naming the field; the admin key, which acts as no account, gets
// a 403 and no credentials a 401.
func TestPortalSessions(t *testing.T) {
	t.Parallel()
	e, _ := securedAPI(t)
	_, auth := newAccountKey(t, e, "portal")
	_, otherAuth := newAccountKey(t, e, "other")
	code, sub := send(t, e, http.MethodPost, "/v1/subscriptions", auth, `{"url": "https://a.example/hook", "event_types": ["a"]}`)
	_, otherSub := send(t, e, http.MethodPost, "/v1/subscriptions", otherAuth, `{"url": "https://b.example/hook", "event_types": ["b"]}`)
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	ep, otherEP := sub["endpoint_id"].(string), otherSub["endpoint_id"].(string)
	before := time.Now()
	code, out := send(t, e, http.MethodPost, "/v1/portal-sessions", auth, `{"endpoint_ids": ["`+ep+`"], "event_types": ["a"]}`)
	link, _ := out["url"].(string)
	exp, err := time.Parse(time.RFC3339, out["expires_at"].(string))
	if code != http.StatusCreated || !strings.HasPrefix(link, "http://example.com/console/portal/enter/") || err != nil ||
		exp.Before(before.Add(time.Hour-time.Minute)) || exp.After(before.Add(time.Hour+time.Minute)) {
		t.Fatalf("portal session: %d %v", code, out)
	}
	if code, out := send(t, e, http.MethodPost, "/v1/portal-sessions", auth, ""); code != http.StatusCreated {
		t.Fatalf("without a body (the whole account): %d %v", code, out)
	}
	for body, field := range badPortalSessions(ep, otherEP) {
		code, out := send(t, e, http.MethodPost, "/v1/portal-sessions", auth, body)
		if code != http.StatusBadRequest || jpath(out, "error", "field") != field {
			t.Errorf("%s: %d %v, want 400 naming %s", body, code, out, field)
		}
	}
	if code, _ := send(t, e, http.MethodPost, "/v1/portal-sessions", "Bearer "+testAdminKey, "{}"); code != http.StatusForbidden {
		t.Errorf("admin key: %d, want 403", code)
	}
	if code, _ := send(t, e, http.MethodPost, "/v1/portal-sessions", "", "{}"); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", code)
	}
}

// badPortalSessions are bodies of POST /v1/portal-sessions refused, with the
// field named: ep is the account's endpoint, otherEP another account's.
func badPortalSessions(ep, otherEP string) map[string]string {
	return map[string]string{
		`{"expires_in_seconds": 59}`:                     "expires_in_seconds",
		`{"expires_in_seconds": 604801}`:                 "expires_in_seconds",
		`{"event_types": ["*"]}`:                         "event_types",
		`{"event_types": [""]}`:                          "event_types",
		`{"endpoint_ids": ["ep_nope"]}`:                  "endpoint_ids",
		`{"endpoint_ids": ["` + otherEP + `"]}`:          "endpoint_ids",
		`{"endpoint_ids": ["` + ep + `", "` + ep + `"]}`: "endpoint_ids",
		`{"endpoint_ids": ["ep_00000000000000000000"]}`:  "endpoint_ids",
		`{"scope": "all"}`:                               "scope",
	}
}
