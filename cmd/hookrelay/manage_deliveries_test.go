package main

import (
	"strings"
	"sync/atomic"
	"testing"
)

// TestCLIDeliveries: issue 24. publish, events, deliveries, dead-letters,
// recover and backlog against the real API and worker: two events
// published to a receiver answering 400 under the Event Grid policy with
// dead-lettering are dead-lettered at once; publishing an id again is a
// duplicate; the lists filter; a delivery shows its attempt; once the
// receiver is healthy, a redrive and then a subscription's recovery
// redrive each dead delivery once, and a replay delivers again.
func TestCLIDeliveries(t *testing.T) {
	t.Parallel()
	u := newCLIUser(t)
	var healthy atomic.Bool
	url := receiver(t, &healthy)
	var sub subscription
	u.json(&sub, "subscriptions", "create", "--url", url, "-t", "dl.test", "--policy", "eventgrid",
		"--retry-policy", `{"dead_lettering": true}`)
	out := u.ok("publish", "dl.test", "--id", "ev-1", "--data", `{"n": 1}`, "--subject", "orders/1")
	if lineWith(out, "id", "ev-1") == "" || lineWith(out, "duplicate", "false") == "" || lineWith(out, sub.ID, "dl.test") == "" {
		t.Fatalf("publish printed:\n%s", out)
	}
	if out := u.ok("publish", "dl.test", "--id", "ev-1"); lineWith(out, "duplicate", "true") == "" {
		t.Fatalf("publish of the same id printed:\n%s", out)
	}
	var second struct{ ID string }
	u.json(&second, "publish", "dl.test")
	if !strings.HasPrefix(second.ID, "pub_") {
		t.Fatalf("publish without --id: id %q, want one the client made", second.ID)
	}
	dead := u.waitUntil(func(out string) bool { return rows(out) == 2 }, "dead-letters", "list", "--subscription", sub.ID)
	dl1 := strings.Fields(lineWith(dead, "ev-1", "Undeliverable: HTTP 400"))
	if !strings.HasPrefix(dead, "ID ") || len(dl1) < 2 {
		t.Fatalf("dead-letters list:\n%s", dead)
	}
	list := u.ok("deliveries", "list", "--status", "dead_lettered", "--endpoint", sub.EndpointID, "--since", "1h")
	if rows(list) != 2 || lineWith(list, dl1[1], "dead_lettered", "1", "dl.test") == "" {
		t.Fatalf("deliveries list --status dead_lettered:\n%s", list)
	}
	if out := u.ok("deliveries", "list", "--status", "delivered"); rows(out) != 0 || !strings.HasPrefix(out, "ID ") {
		t.Fatalf("deliveries list --status delivered lists some:\n%s", out)
	}
	u.fails("status", "deliveries", "list", "--status", "lost")
	detail := u.ok("deliveries", "get", dl1[1])
	if lineWith(detail, "status", "dead_lettered") == "" || !strings.HasPrefix(lineWith(detail, "400", "false"), "0 ") {
		t.Fatalf("deliveries get:\n%s", detail)
	}
	events := u.ok("events", "list", "--type", "dl.test", "--limit", "1")
	if lineWith(events, "ev-1", "dl.test", "orders/1") == "" || lineWith(events, "more: --cursor") == "" {
		t.Fatalf("events list --limit 1:\n%s", events)
	}
	if ev := u.ok("events", "get", "ev-1"); lineWith(ev, "data", `{"n":1}`) == "" || lineWith(ev, dl1[1], "dead_lettered") == "" {
		t.Fatalf("events get:\n%s", ev)
	}
	healthy.Store(true)
	redrive(t, u, sub, dl1[0])
}

// redrive: a redrive of one dead letter, then a recovery of the
// subscription's window, which redrives only the other; both are
// delivered; a replay delivers once more; the backlog empties.
func redrive(t *testing.T, u *cliUser, sub subscription, deadLetter string) {
	if out := u.ok("dead-letters", "redrive", deadLetter); lineWith(out, "pending") == "" && lineWith(out, "delivered") == "" {
		t.Fatalf("dead-letters redrive printed:\n%s", out)
	}
	u.fails("conflict", "dead-letters", "redrive", deadLetter)
	var rec struct {
		Redriven int  `json:"redriven"`
		More     bool `json:"more"`
	}
	u.json(&rec, "recover", "subscription", sub.ID, "--since", "1h")
	if rec.Redriven != 1 || rec.More {
		t.Fatalf("recover subscription: %+v, want the one dead letter not redriven", rec)
	}
	if out := u.ok("recover", "endpoint", sub.EndpointID, "--since", "1h"); lineWith(out, "redriven", "0") == "" {
		t.Fatalf("recover endpoint after the subscription's:\n%s", out)
	}
	u.fails("since", "recover", "endpoint", sub.EndpointID)
	u.waitUntil(func(out string) bool { return rows(out) == 2 }, "deliveries", "list", "--status", "delivered", "--subscription", sub.ID)
	if out := u.ok("events", "replay", "ev-1"); lineWith(out, sub.ID, "dl.test") == "" {
		t.Fatalf("events replay:\n%s", out)
	}
	u.waitUntil(func(out string) bool {
		return strings.Join(strings.Fields(lineWith(out, "pending")), " ") == "pending 0"
	}, "backlog")
}
