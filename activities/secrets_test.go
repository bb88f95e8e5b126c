package activities_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/secrets"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestDeliverRefusesCopiedSecret: a delivery whose subscription holds a
// ciphertext copied from another subscription's row fails as hookrelay's
// own failure (an error naming the subscription and what happened), and
// sends nothing: never a request with a wrong signature. Once it has a
// secret of its own again, it goes out.
func TestDeliverRefusesCopiedSecret(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	var requests atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	defer rcv.Close()
	d := deliveryTo(t, st, rcv.URL)
	other := store.Subscription{AccountID: store.DefaultAccount, URL: rcv.URL + "/other", EventTypes: []string{"other"},
		Policy: "workfront", Active: true}
	if err := st.CreateSubscription(context.Background(), &other); err != nil {
		t.Fatal(err)
	}
	swap := `UPDATE subscriptions b SET signing_secret = a.signing_secret, signing_secret_key = a.signing_secret_key
		FROM subscriptions a WHERE a.id = $1 AND b.id = $2`
	if _, err := st.DB().Exec(swap, other.ID, d.SubscriptionID); err != nil {
		t.Fatal(err)
	}
	in := workflows.DeliverInput{DeliveryID: d.ID, ScheduledAt: time.Now(), Timeout: time.Second}
	_, err := acts.Deliver(context.Background(), in)
	if !errors.Is(err, secrets.ErrOpen) || !strings.Contains(err.Error(), d.SubscriptionID) ||
		!strings.Contains(err.Error(), "copied from another row") {
		t.Fatalf("Deliver with a copied secret: %v", err)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
	restoreSecret(t, st, d.SubscriptionID)
	in.Attempt = 1
	if _, err := acts.Deliver(context.Background(), in); err != nil || requests.Load() != 1 {
		t.Fatalf("Deliver with its own secret: %v, %d requests", err, requests.Load())
	}
}

// restoreSecret seals a new secret for subscription id (a rotation with no
// overlap).
func restoreSecret(t *testing.T, st *store.Store, id string) {
	t.Helper()
	if _, err := st.RotateSigningKey(context.Background(), store.DefaultAccount, id, "", 0); err != nil {
		t.Fatal(err)
	}
}
