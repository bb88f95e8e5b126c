package api

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// badText lists text PostgreSQL cannot store, as it reaches the API in JSON.
var badText = []struct{ name, json string }{
	{"NUL", `"a\u0000b"`},
	{"lone high surrogate", `"a\ud800b"`},
	{"lone low surrogate", `"\udc00"`},
	{"invalid UTF-8", "\"a\xff\xfeb\""},
}

// TestBadTextIsRefused: NUL, invalid UTF-8 and lone surrogates in any key or
// string of a body, in a path id or in a query parameter are a 400 in the
// JSON error shape naming the field, and store nothing (issue 10) — in
// every route that takes text, including an Event Grid batch whose second
// event is bad (its first is not stored either).
func TestBadTextIsRefused(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	code, sub := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "http://127.0.0.1:1/h", "event_types": ["*"]}`)
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	endpoint, _ := sub["endpoint_id"].(string)
	for _, bad := range badText {
		for _, r := range badTextRoutes(bad.json, endpoint) {
			code, got := call(t, e, r.method, r.path, r.body)
			field, _ := jpath(got, "error", "field").(string)
			if code != http.StatusBadRequest || jpath(got, "error", "code") != "invalid_request" || field != r.field {
				t.Errorf("%s in %s %s: %d %v, want 400 naming %q", bad.name, r.method, r.path, code, got, r.field)
			}
		}
	}
	var events, subs int
	if err := st.DB().Get(&events, `SELECT count(*) FROM events`); err != nil || events != 0 {
		t.Errorf("%d events stored (%v), want 0", events, err)
	}
	if err := st.DB().Get(&subs, `SELECT count(*) FROM subscriptions`); err != nil || subs != 1 {
		t.Errorf("%d subscriptions stored (%v), want 1", subs, err)
	}
}

type badRoute struct{ method, path, body, field string }

// badTextRoutes puts s (a JSON string) in each place text enters the API.
func badTextRoutes(s, endpoint string) []badRoute {
	ev := func(k, v string) string {
		return `{"id": "ok-1", "type": "t", "data": {` + k + `: ` + v + `}}`
	}
	egOK := `{"id": "eg-1", "eventType": "t", "subject": "/s", "eventTime": "2024-01-01T00:00:00Z"}`
	return []badRoute{
		{http.MethodPost, "/v1/events", `{"type": ` + s + `}`, "type"},
		{http.MethodPost, "/v1/events", `{"type": "t", "subject": ` + s + `}`, "subject"},
		{http.MethodPost, "/v1/events", `{"type": "t", "ordering_key": ` + s + `}`, "ordering_key"},
		{http.MethodPost, "/v1/events", ev(`"k"`, s), "data.k"},
		{http.MethodPost, "/v1/events", ev(s, `1`), "data"},
		{http.MethodPost, "/v1/events", `{"type": "t", "data": {"a": {` + s + `: 1}}}`, "data.a"},
		{http.MethodPost, "/v1/events", `{"type": "t", "data": [1, {"x": [` + s + `]}]}`, "data[1].x[0]"},
		{http.MethodPost, "/v1/subscriptions", `{"url": "http://127.0.0.1:1/h", "event_types": ["a", ` + s + `]}`, "event_types[1]"},
		{http.MethodPost, "/accounts", `{"name": ` + s + `}`, "name"},
		{http.MethodPost, "/v1/endpoints/" + endpoint + "/enable", `{"reason": ` + s + `}`, "reason"},
		{http.MethodPost, "/eventgrid/events", `[` + egOK + `, {"id": "eg-2", "eventType": "t", "subject": ` + s +
			`, "eventTime": "2024-01-01T00:00:00Z"}]`, "[1].subject"},
		{http.MethodPut, "/eventgrid/subscriptions/s-1", `{"properties": {"destination": {"endpointType": "WebHook",
			"properties": {"endpointUrl": "http://127.0.0.1:1/h"}}, "filter": {"includedEventTypes": [` + s + `]}}}`,
			"properties.filter.includedEventTypes[0]"},
	}
}

// TestBadTextInPathAndQuery: %00 and invalid UTF-8 in the path parameters
// of every route, and in query parameters, are a 400 naming the parameter,
// not a 500, and store nothing.
func TestBadTextInPathAndQuery(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	type badPath struct{ method, path, field string }
	cases := []badPath{
		{http.MethodGet, "/v1/dead-letters?cursor=%00", "cursor"},
		{http.MethodGet, "/v1/dead-letters?subscription_id=%ff%fe", "subscription_id"},
		{http.MethodGet, "/v1/notifications/subscriptions/deliveries?nextPage=a%00", "nextPage"},
		{http.MethodGet, "/notifications/subscriptions/deliveries?where=%ff", "where"},
	}
	for _, r := range e.Routes() {
		for _, m := range pathParam.FindAllString(r.Path, -1) {
			for _, bad := range []string{"%00", "a%ffb"} {
				path := strings.Replace(r.Path, m, bad, 1)
				cases = append(cases, badPath{r.Method, pathParam.ReplaceAllString(path, "x"), m[1:]})
			}
		}
	}
	if len(cases) < 4+2*15 {
		t.Fatalf("only %d cases: the routes' parameters were not found", len(cases))
	}
	for _, cs := range cases {
		code, got := call(t, e, cs.method, cs.path, "{}")
		if code != http.StatusBadRequest || jpath(got, "error", "field") != cs.field {
			t.Errorf("%s %s: %d %v, want 400 naming %q", cs.method, cs.path, code, got, cs.field)
		}
	}
	var stored int
	if err := st.DB().Get(&stored, `SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM subscriptions)`); err != nil || stored != 0 {
		t.Errorf("%d rows stored (%v), want 0", stored, err)
	}
}

var pathParam = regexp.MustCompile(`:[a-z_]+`)
