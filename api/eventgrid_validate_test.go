package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestValidationURLByHand: docs/policies.md#eventgrid (issue 11, item 5): the
// validationUrl of an Event Grid handshake works: a GET with the right code
// validates the subscription (a wrong code, or a second GET, is a 404 that
// says nothing), without credentials, since the code is the credential.
func TestValidationURLByHand(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	// As `hookrelay api` serves it: credentials required everywhere else.
	e := validated(t, &Server{Store: st, Temporal: testenvClient(t), Logger: testenv.Logger(), Auth: Auth{AdminKey: testAdminKey},
		Starter: testenv.Starter(t, testenvClient(t), st)})
	name := "manual"
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "https://manual.example/hook", EventTypes: []string{"m"},
		Name: &name, Policy: "eventgrid", RetryPolicy: store.RawJSON(`{}`), Active: true,
		Options: store.RawJSON(eventgrid.Options(eventgrid.Settings{Mode: eventgrid.ModeCloud, Schema: eventgrid.SchemaEventGrid,
			Validation: eventgrid.ValidationPending, ValidationCode: "code-42"}))}
	if err := st.CreateSubscription(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	link, err := url.Parse(eventgrid.ValidationURL("https://hookrelay.example.com/", sub.ID, "code-42"))
	if err != nil || link.Host != "hookrelay.example.com" {
		t.Fatalf("validation URL %v (%v)", link, err)
	}
	path := link.EscapedPath()
	if code, _ := send(t, e, http.MethodGet, path+"?code=wrong", "", ""); code != http.StatusNotFound {
		t.Fatalf("wrong code: %d, want 404", code)
	}
	if code, out := send(t, e, http.MethodGet, path+"?"+link.RawQuery, "", ""); code != http.StatusOK || out["validated"] != true {
		t.Fatalf("right code: %d %v", code, out)
	}
	got, err := st.SubscriptionByID(context.Background(), sub.ID)
	if err != nil || eventgrid.Of(got.Options).Validation != eventgrid.ValidationSucceeded {
		t.Fatalf("after the GET: %+v (%v)", eventgrid.Of(got.Options), err)
	}
	if code, _ := send(t, e, http.MethodGet, path+"?"+link.RawQuery, "", ""); code != http.StatusNotFound {
		t.Fatalf("second GET: %d, want 404", code)
	}
}

// TestValidationCodeNotShown: the /v1 reads of an Event Grid subscription
// awaiting its handshake show its validation state but never its code, the
// validation URL's credential, which only the receiver is to learn.
func TestValidationCodeNotShown(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	if code, out := call(t, e, http.MethodPut, "/eventgrid/subscriptions/secretive", cloudSub("https://eg.example/hook")); code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, out)
	}
	sub, err := st.GetSubscriptionByName(context.Background(), store.DefaultAccount, "secretive")
	if err != nil {
		t.Fatal(err)
	}
	validationID(t, st, c, "secretive") // ends the handshake with the test
	secret := eventgrid.Of(sub.Options).ValidationCode
	for _, path := range []string{"/v1/subscriptions", "/v1/subscriptions/" + sub.ID} {
		code, out := call(t, e, http.MethodGet, path, "")
		if body := mustJSON(t, out); code != http.StatusOK || secret == "" || strings.Contains(body, secret) ||
			!strings.Contains(body, `"validation":"pending"`) {
			t.Errorf("GET %s: %d %s, want the pending state without the code %q", path, code, body, secret)
		}
	}
}
