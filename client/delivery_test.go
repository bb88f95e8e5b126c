package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookrelay/hookrelay/client"
	"github.com/hookrelay/hookrelay/testenv/testapi"
)

// accountClient is a client of the API at url acting as the default
// account, with an API key the admin key made for it.
func accountClient(ctx context.Context, t *testing.T, url string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	admin, err := client.New(url, testapi.AdminKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := client.Check(admin.CreateKeyWithResponse(ctx, "acct_default", client.NameRequest{Name: "client test"}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(url, key.JSON201.Key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// delivery is what the receiver got at one path.
type delivery struct {
	path   string
	header http.Header
	body   []byte
}

// TestPublishAndVerify: an event published with Client.Publish reaches a
// real receiver through the real API and worker, once per subscription,
// and client.Verify checks each delivery with its subscription's key: the
// v1 HMAC one with the whsec_ secret (which the Standard Webhooks library
// accepts too), the v1a Ed25519 one with the whpk_ public key. Each fails
// with the other subscription's key.
func TestPublishAndVerify(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, _ := testapi.Start(t)
	c := accountClient(ctx, t, url)
	keys := map[string]string{}
	got := make(chan delivery, 4)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{r.URL.Path, r.Header.Clone(), body}
	}))
	defer rcv.Close()
	for path, scheme := range map[string]client.SignatureScheme{"/hmac": client.HmacSha256, "/ed25519": client.Ed25519} {
		sub, err := client.Check(c.CreateSubscriptionWithResponse(ctx, client.SubscriptionRequest{
			URL: rcv.URL + path, EventTypes: []string{"order.paid"}, SignatureScheme: &scheme}))
		if err != nil {
			t.Fatal(err)
		}
		if s := sub.JSON201; s.SigningSecret != nil {
			keys[path] = *s.SigningSecret
		} else if s.SigningPublicKey != nil {
			keys[path] = *s.SigningPublicKey
		}
	}
	res, err := c.Publish(ctx, client.EventRequest{Type: "order.paid", Data: map[string]any{"order": 1042}})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Result(); p == nil || p.ID == "" || len(p.Deliveries) != 2 || p.Duplicate {
		t.Fatalf("publish answered %d %s", res.StatusCode(), res.Body)
	}
	seen := map[string]delivery{}
	for len(seen) < 2 {
		select {
		case d := <-got:
			seen[d.path] = d
		case <-ctx.Done():
			t.Fatalf("deliveries received: %d of 2", len(seen))
		}
	}
	for path, d := range seen {
		if err := client.Verify(keys[path], d.header, d.body); err != nil {
			t.Errorf("%s: Verify with its key: %v", path, err)
		}
		if d.header.Get(client.HeaderWebhookID) != res.Result().ID {
			t.Errorf("%s: Webhook-Id %q, want the event's id %q", path, d.header.Get(client.HeaderWebhookID), res.Result().ID)
		}
	}
	if client.Verify(keys["/ed25519"], seen["/hmac"].header, seen["/hmac"].body) == nil ||
		client.Verify(keys["/hmac"], seen["/ed25519"].header, seen["/ed25519"].body) == nil {
		t.Error("a delivery verifies with the other subscription's key")
	}
	wh, err := standardwebhooks.NewWebhook(keys["/hmac"])
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(seen["/hmac"].body, seen["/hmac"].header); err != nil {
		t.Errorf("the Standard Webhooks library rejects the v1 delivery: %v", err)
	}
}
