package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
)

// egSub is a PUT body with a WebHook destination at url (pre-validated, so
// no handshake is started) and the extra properties fragment.
func egSub(url, extra string) string {
	return `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"` + url +
		`","hookrelayPreValidated":true}}` + extra + `}}`
}

// callCT is call with the given Content-Type ("" sends none).
func callCT(t *testing.T, e *echo.Echo, method, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set(echo.HeaderContentType, contentType)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: answer is not a JSON object: %q", method, path, rec.Body.String())
	}
	return rec.Code, out
}

// wantError checks a response is status in the one error shape, naming field.
func wantError(t *testing.T, what string, code int, body map[string]any, status int, field string) {
	t.Helper()
	errObj, _ := body["error"].(map[string]any)
	if code != status || errObj == nil || str(errObj["code"]) == "" || str(errObj["message"]) == "" {
		t.Errorf("%s: %d %v, want %d in the error shape", what, code, body, status)
		return
	}
	if got := str(errObj["field"]); got != field {
		t.Errorf("%s: field %q, want %q (%v)", what, got, field, errObj["message"])
	}
}

// rowCount is the number of rows of a table.
func rowCount(t *testing.T, st *store.Store, table string) int {
	t.Helper()
	var n int
	if err := st.DB().Get(&n, "SELECT count(*) FROM "+table); err != nil {
		t.Fatal(err)
	}
	return n
}

// jpath walks nested JSON objects: jpath(v, "properties", "hookrelay", "mode").
func jpath(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func TestEventGridSubscriptionLifecycle(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), nil)
	const base = "/eventgrid/subscriptions/"
	limits := `,"filter":{"includedEventTypes":["order.created"]},"retryPolicy":{"maxDeliveryAttempts":10,"eventTimeToLiveInMinutes":120}`
	code, created := call(t, e, http.MethodPut, base+"orders", egSub("https://a.example/hook", limits))
	if code != http.StatusCreated || created["name"] != "orders" || created["type"] != "Microsoft.EventGrid/eventSubscriptions" {
		t.Fatalf("create: %d %v", code, created)
	}
	id := str(created["id"])
	hr := func(v map[string]any, k string) any { return jpath(v, "properties", "hookrelay", k) }
	if jpath(created, "properties", "provisioningState") != "Succeeded" || hr(created, "mode") != "cloud" ||
		hr(created, "policy") != "eventgrid" || hr(created, "maxDeliveryAttempts") != float64(10) ||
		hr(created, "eventTimeToLiveInSeconds") != float64(7200) || hr(created, "id") != id || id == "" {
		t.Fatalf("created view: %v", created)
	}
	// A replace keeps the id and mode and takes the new body as a whole.
	code, replaced := call(t, e, http.MethodPut, base+"orders", egSub("https://b.example/hook", ""))
	if code != http.StatusOK || replaced["id"] != id || hr(replaced, "mode") != "cloud" ||
		hr(replaced, "maxDeliveryAttempts") != float64(30) || hr(replaced, "eventTimeToLiveInSeconds") != float64(86400) {
		t.Fatalf("replace: %d %v", code, replaced)
	}
	code, got := call(t, e, http.MethodGet, base+"orders", "")
	if code != http.StatusOK || jpath(got, "properties", "destination", "properties", "endpointUrl") != "https://b.example/hook" ||
		jpath(got, "properties", "filter") != nil {
		t.Fatalf("get after replace: %d %v", code, got)
	}
	// Edge mode, kept by a replace that gives no mode.
	for i, q := range []string{"?mode=edge", ""} {
		code, edge := call(t, e, http.MethodPut, base+"edge-orders"+q, egSub("https://c.example/hook", ""))
		if code != []int{http.StatusCreated, http.StatusOK}[i] || hr(edge, "mode") != "edge" ||
			hr(edge, "policy") != "eventgrid-edge" || hr(edge, "validation") != eventgrid.ValidationNone {
			t.Fatalf("edge put %d: %d %v", i, code, edge)
		}
	}
	listNames := func() []string {
		code, list := call(t, e, http.MethodGet, "/eventgrid/subscriptions", "")
		vs, ok := list["value"].([]any)
		if code != http.StatusOK || !ok {
			t.Fatalf("list: %d %v", code, list)
		}
		var names []string
		for _, v := range vs {
			names = append(names, str(jpath(v, "name")))
		}
		return names
	}
	if names := listNames(); strings.Join(names, ",") != "orders,edge-orders" {
		t.Fatalf("list names %v", names)
	}
	if code, body := call(t, e, http.MethodDelete, base+"orders", ""); code != http.StatusOK {
		t.Fatalf("delete: %d %v", code, body)
	}
	code, body := call(t, e, http.MethodGet, base+"orders", "")
	wantError(t, "get after delete", code, body, http.StatusNotFound, "")
	code, body = call(t, e, http.MethodDelete, base+"orders", "")
	wantError(t, "delete again", code, body, http.StatusNotFound, "")
	if names := listNames(); strings.Join(names, ",") != "edge-orders" {
		t.Fatalf("list after delete %v", names)
	}
	code, again := call(t, e, http.MethodPut, base+"orders", egSub("https://a.example/hook", ""))
	if code != http.StatusCreated || again["id"] == id || str(again["id"]) == "" {
		t.Fatalf("re-create after delete: %d %v (old id %s)", code, again, id)
	}
	code, body = call(t, e, http.MethodGet, base+"never-made", "")
	wantError(t, "get unknown", code, body, http.StatusNotFound, "")
}

func TestEventGridSubscriptionBadInput(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := testAPI(t, st, nil)
	const u = "https://a.example/hook"
	dest := func(props string) string {
		return `{"properties":{"destination":{"endpointType":"WebHook","properties":{` + props + `}}}}`
	}
	cases := []struct{ name, path, body, field string }{
		{"unknown top-level field", "ok-name", `{"location":"westus","properties":{}}`, "location"},
		{"unknown nested field", "ok-name", egSub(u, `,"retryPolicy":{"foo":1}`), "properties.retryPolicy.foo"},
		{"unknown destination field", "ok-name", dest(`"endpointUrl":"` + u + `","secret":"x"`), "properties.destination.properties.secret"},
		{"subject filter", "ok-name", egSub(u, `,"filter":{"subjectBeginsWith":"/a"}`), "properties.filter.subjectBeginsWith"},
		{"maxDeliveryAttempts 0", "ok-name", egSub(u, `,"retryPolicy":{"maxDeliveryAttempts":0}`), "properties.retryPolicy.maxDeliveryAttempts"},
		{"maxDeliveryAttempts 31", "ok-name", egSub(u, `,"retryPolicy":{"maxDeliveryAttempts":31}`), "properties.retryPolicy.maxDeliveryAttempts"},
		{"maxDeliveryAttempts string", "ok-name", egSub(u, `,"retryPolicy":{"maxDeliveryAttempts":"ten"}`), "properties.retryPolicy.maxDeliveryAttempts"},
		{"ttl 0", "ok-name", egSub(u, `,"retryPolicy":{"eventTimeToLiveInMinutes":0}`), "properties.retryPolicy.eventTimeToLiveInMinutes"},
		{"ttl 1441", "ok-name", egSub(u, `,"retryPolicy":{"eventTimeToLiveInMinutes":1441}`), "properties.retryPolicy.eventTimeToLiveInMinutes"},
		{"expiry 1441", "ok-name", egSub(u, `,"retryPolicy":{"eventExpiryInMinutes":1441}`), "properties.retryPolicy.eventExpiryInMinutes"},
		{"ttl and expiry", "ok-name", egSub(u, `,"retryPolicy":{"eventTimeToLiveInMinutes":5,"eventExpiryInMinutes":5}`), "properties.retryPolicy.eventExpiryInMinutes"},
		{"endpointType EventHub", "ok-name", `{"properties":{"destination":{"endpointType":"EventHub","properties":{"endpointUrl":"` + u + `"}}}}`, "properties.destination.endpointType"},
		{"endpointType missing", "ok-name", `{"properties":{"destination":{"properties":{"endpointUrl":"` + u + `"}}}}`, "properties.destination.endpointType"},
		{"endpointUrl missing", "ok-name", dest(`"hookrelayPreValidated":true`), "properties.destination.properties.endpointUrl"},
		{"endpointUrl ftp", "ok-name", dest(`"endpointUrl":"ftp://a.example/hook"`), "properties.destination.properties.endpointUrl"},
		{"endpointUrl relative", "ok-name", dest(`"endpointUrl":"/hook"`), "properties.destination.properties.endpointUrl"},
		{"destination properties missing", "ok-name", `{"properties":{"destination":{"endpointType":"WebHook"}}}`, "properties.destination.properties"},
		{"destination missing", "ok-name", `{"properties":{}}`, "properties.destination"},
		{"properties missing", "ok-name", `{}`, "properties"},
		{"bad mode", "ok-name?mode=fog", egSub(u, ""), "mode"},
		{"outputBatching on cloud", "ok-name", egSub(u, `,"outputBatching":{"maxEventsPerBatch":10}`), "properties.outputBatching"},
		{"edge batch over 50", "ok-name?mode=edge", egSub(u, `,"outputBatching":{"maxEventsPerBatch":51}`), "properties.outputBatching.maxEventsPerBatch"},
		{"edge batch size over 1033", "ok-name?mode=edge", egSub(u, `,"outputBatching":{"maxEventsPerBatch":5,"preferredBatchSizeInKilobytes":1034}`), "properties.outputBatching.preferredBatchSizeInKilobytes"},
		{"schema", "ok-name", egSub(u, `,"eventDeliverySchema":"CustomInputSchema"`), "properties.eventDeliverySchema"},
		{"dead letter type", "ok-name", egSub(u, `,"deadLetterDestination":{"endpointType":"EventHub"}`), "properties.deadLetterDestination.endpointType"},
		{"malformed JSON", "ok-name", `{"properties":`, ""},
		{"empty body", "ok-name", ``, ""},
		{"two objects", "ok-name", egSub(u, "") + `{}`, ""},
		{"array body", "ok-name", `[]`, ""},
		{"short name", "ab", egSub(u, ""), "name"},
		{"name with underscore", "has_underscore", egSub(u, ""), "name"},
	}
	for _, tc := range cases {
		code, body := call(t, e, http.MethodPut, "/eventgrid/subscriptions/"+tc.path, tc.body)
		wantError(t, tc.name, code, body, http.StatusBadRequest, tc.field)
	}
	for _, table := range []string{"subscriptions", "endpoints"} {
		if n := rowCount(t, st, table); n != 0 {
			t.Errorf("%s has %d rows after bad input, want 0", table, n)
		}
	}
}

func TestEventGridPublishBadInput(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := testAPI(t, st, nil)
	const (
		js    = "application/json"
		ce    = eventgrid.ContentTypeCloudEvent
		batch = eventgrid.ContentTypeCloudEventBatch
		ok    = `{"id":"e1","eventType":"order.created","subject":"/orders/1","eventTime":"2024-01-01T00:00:00Z","data":{}}`
		okCE  = `{"specversion":"1.0","id":"c1","source":"/orders","type":"order.created","data":{}}`
	)
	eg := func(fields string) string {
		return `[` + ok + `,{"id":"e2","eventType":"order.created","subject":"/orders/2",` + fields + `}]`
	}
	cases := []struct{ name, ct, body, field string }{
		{"not an array", js, ok, ""},
		{"empty array", js, `[]`, ""},
		{"malformed", js, `[{"id":`, ""},
		{"missing id", js, `[{"eventType":"a","subject":"s","eventTime":"2024-01-01T00:00:00Z"}]`, "[0].id"},
		{"missing eventType", js, `[` + ok + `,{"id":"e2","subject":"s","eventTime":"2024-01-01T00:00:00Z"}]`, "[1].eventType"},
		{"missing subject", js, `[{"id":"e1","eventType":"a","eventTime":"2024-01-01T00:00:00Z"}]`, "[0].subject"},
		{"missing eventTime", js, eg(`"data":{}`), "[1].eventTime"},
		{"bad eventTime", js, eg(`"eventTime":"yesterday"`), "[1].eventTime"},
		{"numeric eventTime", js, eg(`"eventTime":5`), "[1].eventTime"},
		{"numeric topic", js, eg(`"eventTime":"2024-01-01T00:00:00Z","topic":5`), "[1].topic"},
		{"unknown field", js, eg(`"eventTime":"2024-01-01T00:00:00Z","colour":"red"`), "[1].colour"},
		{"metadataVersion", js, eg(`"eventTime":"2024-01-01T00:00:00Z","metadataVersion":"2"`), "[1].metadataVersion"},
		{"text/plain", "text/plain", `[` + ok + `]`, "Content-Type"},
		{"form", "application/x-www-form-urlencoded", `[` + ok + `]`, "Content-Type"},
		{"CE without specversion", ce, `{"id":"c1","source":"/o","type":"a"}`, "specversion"},
		{"CE old specversion", ce, `{"specversion":"0.3","id":"c1","source":"/o","type":"a"}`, "specversion"},
		{"CE missing source", ce, `{"specversion":"1.0","id":"c1","type":"a"}`, "source"},
		{"CE numeric type", ce, `{"specversion":"1.0","id":"c1","source":"/o","type":5}`, "type"},
		{"CE bad time", ce, `{"specversion":"1.0","id":"c1","source":"/o","type":"a","time":"noon"}`, "time"},
		{"CE data_base64", ce, `{"specversion":"1.0","id":"c1","source":"/o","type":"a","data_base64":"AAEC"}`, "data_base64"},
		{"CE bad extension name", ce, `{"specversion":"1.0","id":"c1","source":"/o","type":"a","Bad_Name":1}`, "Bad_Name"},
		{"CE array to single", ce, `[` + okCE + `]`, ""},
		{"CE batch not an array", batch, okCE, ""},
		{"CE batch without specversion", batch, `[` + okCE + `,{"id":"c2","source":"/o","type":"a"}]`, "[1].specversion"},
	}
	for _, tc := range cases {
		code, body := callCT(t, e, http.MethodPost, "/eventgrid/events", tc.ct, tc.body)
		wantError(t, tc.name, code, body, http.StatusBadRequest, tc.field)
	}
	for _, table := range []string{"events", "deliveries"} {
		if n := rowCount(t, st, table); n != 0 {
			t.Errorf("%s has %d rows after bad input, want 0", table, n)
		}
	}
	// The same shapes, well formed, are accepted (no subscription: no deliveries).
	for _, c := range []struct{ ct, body string }{{js, `[` + ok + `]`}, {"", `[` + ok + `]`}, {ce, okCE}, {batch, `[` + okCE + `]`}} {
		if code, body := callCT(t, e, http.MethodPost, "/eventgrid/events", c.ct, c.body); code != http.StatusOK {
			t.Errorf("%s %s: %d %v", c.ct, c.body, code, body)
		}
	}
}
