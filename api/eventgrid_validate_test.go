package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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
	if ok, err := st.MarkValidationSent(context.Background(), sub.ID, "code-42", time.Now()); err != nil || !ok {
		t.Fatalf("mark sent: %v %v", ok, err)
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

// TestValidationURLLife: issue 53, item 6 (docs/policies.md#eventgrid). The
// validationUrl works for 10 minutes from the send of the validation event
// that carried it, whenever the subscription was last changed, and never
// once the handshake failed, nor before an event carried it.
func TestValidationURLLife(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := validated(t, &Server{Store: st, Temporal: testenvClient(t), Logger: testenv.Logger(), Auth: Auth{AdminKey: testAdminKey},
		Starter: testenv.Starter(t, testenvClient(t), st)})
	ctx := context.Background()
	subscribe := func(name string, changed, sent time.Duration, state string) (store.Subscription, int) {
		t.Helper()
		sub := store.Subscription{AccountID: store.DefaultAccount, URL: "https://life.example/" + name, EventTypes: []string{"m"},
			Name: &name, Policy: "eventgrid", RetryPolicy: store.RawJSON(`{}`), Active: true,
			Options: store.RawJSON(eventgrid.Options(eventgrid.Settings{Mode: eventgrid.ModeCloud, Schema: eventgrid.SchemaEventGrid,
				Validation: eventgrid.ValidationPending, ValidationCode: "code-" + name}))}
		if err := st.CreateSubscription(ctx, &sub); err != nil {
			t.Fatal(err)
		}
		if sent >= 0 {
			if ok, err := st.MarkValidationSent(ctx, sub.ID, "code-"+name, time.Now().Add(-sent)); err != nil || !ok {
				t.Fatalf("mark sent: %v %v", ok, err)
			}
		}
		if state == eventgrid.ValidationFailed {
			if _, err := st.SetEventGridValidation(ctx, sub.ID, "code-"+name, state); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.DB().Exec(`UPDATE subscriptions SET updated_at = $2 WHERE id = $1`, sub.ID, time.Now().Add(-changed)); err != nil {
			t.Fatal(err)
		}
		link, _ := url.Parse(eventgrid.ValidationURL("https://hookrelay.example.com", sub.ID, "code-"+name))
		code, _ := send(t, e, http.MethodGet, link.EscapedPath()+"?"+link.RawQuery, "", "")
		return sub, code
	}
	for _, c := range []struct {
		name          string
		changed, sent time.Duration // ago; sent < 0: never
		state         string
		want          int
	}{
		{"expired", time.Minute, 11 * time.Minute, eventgrid.ValidationPending, http.StatusNotFound},
		{"sent-late", 20 * time.Minute, time.Minute, eventgrid.ValidationPending, http.StatusOK},
		{"failed", time.Minute, time.Minute, eventgrid.ValidationFailed, http.StatusNotFound},
		{"unsent", time.Minute, -1, eventgrid.ValidationPending, http.StatusNotFound},
	} {
		sub, code := subscribe(c.name, c.changed, c.sent, c.state)
		if code != c.want {
			t.Errorf("%s: GET validationUrl: %d, want %d", c.name, code, c.want)
		}
		got, err := st.SubscriptionByID(ctx, sub.ID)
		validated := err == nil && eventgrid.Of(got.Options).Validation == eventgrid.ValidationSucceeded
		if validated != (c.want == http.StatusOK) {
			t.Errorf("%s: validated %v (%v)", c.name, validated, err)
		}
	}
}
