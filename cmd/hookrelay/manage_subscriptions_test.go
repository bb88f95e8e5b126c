package main

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookrelay/hookrelay/testenv/testapi"
)

// subscription is what the tests read of a subscription's JSON.
type subscription struct {
	ID                      string   `json:"id"`
	EndpointID              string   `json:"endpoint_id"`
	URL                     string   `json:"url"`
	EventTypes              []string `json:"event_types"`
	Active                  bool     `json:"active"`
	SigningSecret           string   `json:"signing_secret"`
	PreviousSecretExpiresAt string   `json:"previous_secret_expires_at"`
}

// TestCLISubscriptions: issue 24. The subscription commands against the
// real API: create prints the secret once, list and get print tables and,
// with --json, the API's own JSON; update changes only what is given;
// rotate-secret and reveal-secret show the new secret; the API's errors
// (a bad URL, an unknown id) come out with its message and fail the
// command; delete deletes.
func TestCLISubscriptions(t *testing.T) {
	t.Parallel()
	u := newCLIUser(t)
	url := receiver(t, new(atomic.Bool))
	out := u.ok("subscriptions", "create", "--url", url+"/a", "-t", "order.paid,order.refunded", "--policy", "eventgrid")
	secret := strings.Fields(lineWith(out, "signing_secret"))
	if len(secret) != 2 || !strings.HasPrefix(secret[1], "whsec_") || lineWith(out, "event_types", "order.paid,order.refunded") == "" {
		t.Fatalf("subscriptions create printed:\n%s", out)
	}
	var list struct{ Subscriptions []subscription }
	u.json(&list, "subscriptions", "list")
	if len(list.Subscriptions) != 1 || list.Subscriptions[0].URL != url+"/a" || list.Subscriptions[0].SigningSecret != "" {
		t.Fatalf("subscriptions list --json: %+v", list)
	}
	sub := list.Subscriptions[0]
	table := u.ok("subscriptions", "list")
	if !strings.HasPrefix(table, "ID ") || lineWith(table, sub.ID, url+"/a", "eventgrid", "hmac-sha256", "true") == "" {
		t.Fatalf("subscriptions list:\n%s", table)
	}
	if got, want := u.ok("subscriptions", "get", sub.ID, "--json"), u.apiGet("/v1/subscriptions/"+sub.ID); got != want {
		t.Fatalf("subscriptions get --json printed\n%s\nthe API answers\n%s", got, want)
	}
	var changed subscription
	u.json(&changed, "subscriptions", "update", sub.ID, "--pause", "-t", "order.shipped")
	if changed.Active || len(changed.EventTypes) != 1 || changed.EventTypes[0] != "order.shipped" || changed.URL != sub.URL {
		t.Fatalf("subscriptions update --pause -t order.shipped: %+v", changed)
	}
	if lineWith(u.ok("subscriptions", "update", sub.ID, "--resume"), "active", "true") == "" {
		t.Fatal("subscriptions update --resume: still paused")
	}
	u.fails("invalid_request", "subscriptions", "update", sub.ID, "--url", "ftp://nope")
	u.fails("unknown", "subscriptions", "create", "--url", url, "-t", "a", "--policy", "nope")
	u.fails("not_found", "subscriptions", "get", "sub_nope")
	var key struct {
		SigningSecret           string `json:"signing_secret"`
		PreviousSecretExpiresAt string `json:"previous_secret_expires_at"`
	}
	u.json(&key, "subscriptions", "rotate-secret", sub.ID, "--overlap", "1h")
	if !strings.HasPrefix(key.SigningSecret, "whsec_") || key.SigningSecret == secret[1] || key.PreviousSecretExpiresAt == "" {
		t.Fatalf("rotate-secret: %+v", key)
	}
	if lineWith(u.ok("subscriptions", "reveal-secret", sub.ID), "signing_secret", key.SigningSecret) == "" {
		t.Fatal("reveal-secret does not show the rotated secret")
	}
	if out := u.ok("subscriptions", "delete", sub.ID); lineWith(out, "deleted", sub.ID) == "" {
		t.Fatalf("subscriptions delete printed %q", out)
	}
	u.fails("not_found", "subscriptions", "delete", sub.ID)
}

// TestCLIEndpointsAndKeys: issue 24. endpoints list and get show an
// endpoint's health; disable (with a reason) and enable reach its workflow
// and its state changes; unfreeze of an endpoint that is not frozen is the
// API's 409, with its message. keys list shows the key newCLIUser made;
// keys revoke ends it: the next command is the API's 401.
func TestCLIEndpointsAndKeys(t *testing.T) {
	t.Parallel()
	u := newCLIUser(t)
	url := receiver(t, new(atomic.Bool))
	var sub subscription
	u.json(&sub, "subscriptions", "create", "--url", url+"/e", "-t", "a")
	list := u.ok("endpoints", "list")
	if !strings.HasPrefix(list, "ID ") || lineWith(list, sub.EndpointID, "enabled", url+"/e") == "" {
		t.Fatalf("endpoints list:\n%s", list)
	}
	var all struct {
		Endpoints []struct{ ID, State string }
	}
	u.json(&all, "endpoints", "list")
	if len(all.Endpoints) != 1 || all.Endpoints[0].ID != sub.EndpointID || all.Endpoints[0].State != "enabled" {
		t.Fatalf("endpoints list --json: %+v", all)
	}
	u.fails("not frozen", "endpoints", "unfreeze", sub.EndpointID)
	if out := u.ok("endpoints", "disable", sub.EndpointID, "--reason", "receiver maintenance"); lineWith(out, "state_before", "enabled") == "" {
		t.Fatalf("endpoints disable printed:\n%s", out)
	}
	u.waitUntil(func(out string) bool {
		return strings.Join(strings.Fields(lineWith(out, "state")), " ") == "state disabled" &&
			lineWith(out, "enabled", "disabled", "receiver maintenance") != ""
	}, "endpoints", "get", sub.EndpointID)
	u.ok("endpoints", "enable", sub.EndpointID)
	u.waitFor(`"state":"enabled"`, "endpoints", "get", sub.EndpointID, "--json")
	account := u.vars["HOOKRELAY_API_KEY"]
	u.vars["HOOKRELAY_API_KEY"] = testapi.AdminKey
	keys := u.ok("keys", "list", "acct_default")
	line := strings.Fields(lineWith(keys, "cli test"))
	if !strings.HasPrefix(keys, "ID ") || len(line) < 2 {
		t.Fatalf("keys list:\n%s", keys)
	}
	u.ok("keys", "revoke", "acct_default", line[0])
	u.vars["HOOKRELAY_API_KEY"] = account
	u.fails("401 unauthorized", "subscriptions", "list")
}
