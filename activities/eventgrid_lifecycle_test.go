package activities_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestValidationRefusesLoopbackURL: issue 53, item 7. Outside `hookrelay
// dev` a validation event whose validationUrl is on a loopback address (a
// HOOKRELAY_PUBLIC_URL left at its local default) is not sent: the handshake
// fails at once, without retries, and says why in the subscription's
// validation state. `hookrelay dev` (LoopbackValidationURL) sends it.
func TestValidationRefusesLoopbackURL(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte(`{"validationResponse": "code-9"}`))
	}))
	t.Cleanup(srv.Close)
	subscribe := func(name string) store.Subscription {
		t.Helper()
		sub := store.Subscription{AccountID: store.DefaultAccount, URL: srv.URL + "/" + name, EventTypes: []string{t.Name()}, Name: &name,
			Policy: "eventgrid", RetryPolicy: store.RawJSON(`{}`), Active: true,
			Options: store.RawJSON(eventgrid.Options(eventgrid.Settings{Mode: eventgrid.ModeCloud, Schema: eventgrid.SchemaEventGrid,
				Validation: eventgrid.ValidationPending, ValidationCode: "code-9"}))}
		if err := st.CreateSubscription(context.Background(), &sub); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	for _, public := range []string{"http://localhost:8080", "http://127.0.0.1:8080/", "http://[::1]:8080", "http://0.0.0.0:8080"} {
		acts := activities.New(st, testenv.Logger(), testenv.Egress())
		acts.PublicURL = public
		sub := subscribe("refused-" + strings.NewReplacer(":", "", "/", "", "[", "", "]", "", ".", "").Replace(public))
		_, err := acts.ValidateEventGrid(context.Background(), workflows.ValidationInput{SubscriptionID: sub.ID, Code: "code-9"})
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != activities.ErrTypeValidationRefused {
			t.Fatalf("%s: handshake error %v, want a non-retryable %s", public, err, activities.ErrTypeValidationRefused)
		}
		got, err := st.SubscriptionByID(context.Background(), sub.ID)
		if eg := eventgrid.Of(got.Options); err != nil || !strings.Contains(eg.ValidationError, "HOOKRELAY_PUBLIC_URL") {
			t.Fatalf("%s: validation state %+v (%v), want the reason", public, eg, err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d validation requests sent, want none", n)
	}
	dev := activities.New(st, testenv.Logger(), testenv.Egress())
	dev.PublicURL, dev.LoopbackValidationURL = "http://127.0.0.1:8080", true
	sub := subscribe("dev")
	if res, err := dev.ValidateEventGrid(context.Background(), workflows.ValidationInput{SubscriptionID: sub.ID, Code: "code-9"}); err != nil || !res.Validated {
		t.Fatalf("under hookrelay dev: %+v %v", res, err)
	}
}
