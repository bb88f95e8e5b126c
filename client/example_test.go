package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/hookrelay/hookrelay/client"
)

// Publish an event once, however often the API asks to try again.
func ExampleClient_Publish() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", os.Getenv("HOOKRELAY_API_KEY"))
	if err != nil {
		panic(err)
	}
	id := "order-1042-paid"
	res, err := c.Publish(ctx, client.EventRequest{ID: &id, Type: "order.paid", Data: map[string]any{"order": 1042}})
	if err != nil {
		fmt.Println(err) // an *client.Error when the API said no
		return
	}
	fmt.Println(res.Result().ID, len(res.Result().Deliveries))
}

// List a subscription's dead-lettered deliveries.
func ExampleCheck() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", os.Getenv("HOOKRELAY_API_KEY"))
	if err != nil {
		panic(err)
	}
	sub, status := "sub_123", client.DeadLettered
	page, err := client.Check(c.ListDeliveriesWithResponse(ctx, &client.ListDeliveriesParams{SubscriptionID: &sub, Status: &status}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range page.JSON200.Deliveries {
		fmt.Println(d.ID, d.Attempts, d.FinishedAt)
	}
}

// Verify a delivery's signature in a receiver.
func ExampleVerify() {
	secret := os.Getenv("WEBHOOK_SECRET") // the subscription's whsec_ secret, or its whpk_ public key
	http.HandleFunc("/hooks", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := client.Verify(secret, r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		// Handle body; Webhook-Id is the event's id, for deduplication.
	})
}
