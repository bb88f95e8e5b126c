package activities_test

import (
	"context"
	"testing"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestEndpointRulesKeptWhenReadFails: issue 53, item 3. When an endpoint's
// rules cannot be read, the worker keeps the last ones it read (and logs
// it), never "no breaker" (the delivery's own policy's, here none).
func TestEndpointRulesKeptWhenReadFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/rules-kept",
		EventTypes: []string{"rules.kept"}, Policy: "workfront", Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	first := acts.EndpointRules(ctx, sub.EndpointID, policies.NoHealth)
	if first != policies.WorkfrontHealth {
		t.Fatalf("rules read %+v, want Workfront's", first)
	}
	// Every read of the endpoint fails from now on.
	if _, err := st.DB().Exec(`ALTER TABLE endpoints RENAME COLUMN rules TO rules_unreadable`); err != nil {
		t.Fatal(err)
	}
	acts.AgeRules(sub.EndpointID)
	if got := acts.EndpointRules(ctx, sub.EndpointID, policies.NoHealth); got != first {
		t.Fatalf("after a failed read the rules are %+v, want the last known %+v", got, first)
	}
}
