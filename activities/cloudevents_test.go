package activities_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// cloudEventsSub stores an Azure Event Grid subscription in the CloudEvents
// schema, awaiting its handshake with code.
func cloudEventsSub(t *testing.T, st *store.Store, url, code string) store.Subscription {
	t.Helper()
	name := "ce-" + t.Name()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: url, EventTypes: []string{t.Name()}, Name: &name,
		Policy: "eventgrid", RetryPolicy: store.RawJSON(`{}`), Active: true,
		Options: store.RawJSON(eventgrid.Options(eventgrid.Settings{Mode: eventgrid.ModeCloud, Schema: eventgrid.SchemaCloudEvents,
			Validation: eventgrid.ValidationPending, ValidationCode: code}))}
	if err := st.CreateSubscription(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

// TestCloudEventsHandshake: docs/policies.md#eventgrid (issue 11, item 5): a
// CloudEvents subscription is validated with the CloudEvents abuse-protection
// handshake (OPTIONS with WebHook-Request-Origin, answered with
// WebHook-Allowed-Origin), not with a SubscriptionValidationEvent: a real
// receiver that allows the origin validates it; one that only echoes
// Azure's validation code does not.
func TestCloudEventsHandshake(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	allows := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions && r.Header.Get(eventgrid.HeaderRequestOrigin) != "" {
			w.Header().Set(eventgrid.HeaderAllowedOrigin, r.Header.Get(eventgrid.HeaderRequestOrigin))
		}
	}))
	t.Cleanup(allows.Close)
	azureOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": "code-1"})
	}))
	t.Cleanup(azureOnly.Close)
	ok := cloudEventsSub(t, st, allows.URL+"/ce", "code-1")
	res, err := acts.ValidateEventGrid(context.Background(), workflows.ValidationInput{SubscriptionID: ok.ID, Code: "code-1"})
	if err != nil || !res.Validated {
		t.Fatalf("receiver allowing the origin: %+v %v", res, err)
	}
	t.Run("echo only", func(t *testing.T) {
		bad := cloudEventsSub(t, st, azureOnly.URL+"/ce", "code-1")
		if res, err := acts.ValidateEventGrid(context.Background(), workflows.ValidationInput{SubscriptionID: bad.ID, Code: "code-1"}); err == nil {
			t.Fatalf("a receiver that only echoes the code validated a CloudEvents subscription: %+v", res)
		}
	})
}

// TestCloudEventsOnePerRequest: an Azure Event Grid CloudEvents subscription
// gets each event alone, as an object, with Content-Type
// application/cloudevents+json (structured mode), not an array.
func TestCloudEventsOnePerRequest(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	type request struct {
		contentType string
		body        []byte
	}
	requests := make(chan request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		requests <- request{r.Header.Get("Content-Type"), b}
	}))
	t.Cleanup(srv.Close)
	sub := cloudEventsSub(t, st, srv.URL+"/ce", "c")
	pub, err := st.Publish(context.Background(), store.Event{AccountID: store.DefaultAccount, ExternalID: "ce-1",
		Type: t.Name(), Data: store.RawJSON(`{"n":1}`)})
	if err != nil || len(pub.Deliveries) != 1 || pub.Deliveries[0].SubscriptionID != sub.ID {
		t.Fatalf("publish: %+v %v", pub, err)
	}
	if _, err := acts.Deliver(context.Background(), workflows.DeliverInput{DeliveryID: pub.Deliveries[0].ID,
		ScheduledAt: time.Now(), Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	got := <-requests
	var ev map[string]any
	if err := json.Unmarshal(got.body, &ev); err != nil || ev["id"] != "ce-1" || ev["specversion"] != "1.0" ||
		got.contentType != eventgrid.ContentTypeCloudEvent+"; charset=utf-8" {
		t.Fatalf("request %s %s (%v): want one CloudEvent object", got.contentType, got.body, err)
	}
}

// TestValidationEventCarriesURL: the SubscriptionValidationEvent of an Event
// Grid schema subscription carries a working validationUrl on the API's
// public address (docs/policies.md#eventgrid), no longer an empty one.
func TestValidationEventCarriesURL(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	acts.PublicURL = "https://hooks.example.com"
	urls := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var evs []struct {
			Data struct{ ValidationCode, ValidationURL string } `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&evs)
		if len(evs) == 1 {
			urls <- evs[0].Data.ValidationURL
			_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": evs[0].Data.ValidationCode})
		}
	}))
	t.Cleanup(srv.Close)
	name := "eg-url"
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: srv.URL + "/eg", EventTypes: []string{t.Name()}, Name: &name,
		Policy: "eventgrid", RetryPolicy: store.RawJSON(`{}`), Active: true,
		Options: store.RawJSON(eventgrid.Options(eventgrid.Settings{Mode: eventgrid.ModeCloud, Schema: eventgrid.SchemaEventGrid,
			Validation: eventgrid.ValidationPending, ValidationCode: "code-7"}))}
	if err := st.CreateSubscription(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	res, err := acts.ValidateEventGrid(context.Background(), workflows.ValidationInput{SubscriptionID: sub.ID, Code: "code-7"})
	if err != nil || !res.Validated {
		t.Fatalf("handshake: %+v %v", res, err)
	}
	if got, want := <-urls, eventgrid.ValidationURL(acts.PublicURL, sub.ID, "code-7"); got != want {
		t.Fatalf("validationUrl %q, want %q", got, want)
	}
	// Its 10 minutes count from this send (issue 53, item 6).
	if got, err := st.SubscriptionByID(context.Background(), sub.ID); err != nil || eventgrid.Of(got.Options).ValidationSentAt == nil {
		t.Fatalf("the send was not recorded: %s (%v)", got.Options, err)
	}
}
