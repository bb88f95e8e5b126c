package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookrelay/hookrelay/workflows"
)

// The ordered phase (issues 26 and 56, docs/ordering.md): one ordered
// subscription, events over 1, 10 and 100 ordering keys from
// shippedPublishers publishers as fast as they are answered, each rate a
// ratio to the unordered saturated phase of the same run, with what an
// ordered delivery costs Temporal and a check of the order PostgreSQL
// recorded.
var shippedOrdered = []struct{ keys, events int }{{1, 500}, {10, 1000}, {100, 1000}}

// ordered runs the ordered phases and notes their figures.
func (r *shippedRun) ordered() {
	subID := subscribeJSON(r.b, r.dev.api, fmt.Sprintf(`{"url":%q,"event_types":["ordered"],"policy":"eventgrid","ordered":true}`,
		r.rcv.url+"/ordered"))
	unordered, hasUnordered := r.results["hookrelay saturated"]
	var rates []string
	for _, o := range shippedOrdered {
		p := publisher{api: r.dev.api, typ: "ordered", prefix: fmt.Sprintf("ord-%d", o.keys),
			paths: []string{"/ordered"}, orderingKeys: o.keys}
		res := r.phase(fmt.Sprintf("ordered %d keys", o.keys), 10*time.Minute, func() []shot {
			return closedLoop(o.events, shippedPublishers, p.send)
		})
		rate := fmt.Sprintf("%d keys %.1f/s", o.keys, res.perSecond)
		if hasUnordered {
			rate += fmt.Sprintf(" (%.2fx unordered)", ratio(res.perSecond, unordered.perSecond))
		}
		cost := r.orderedCost(subID, p, res.receipts)
		bad, err := outOfOrder(r.dev.pgURL, subID, p.prefix)
		if err != nil {
			r.b.Errorf("ordered %d keys: order check: %v", o.keys, err)
		}
		r.disorder += bad
		r.printf("%22s per ordered delivery: %s; recorded out of order or not delivered: %d", "", cost, bad)
		rates = append(rates, rate+", "+cost)
	}
	if hasUnordered {
		rates = append(rates, fmt.Sprintf("unordered (hookrelay saturated) %.1f/s", unordered.perSecond))
	}
	r.extra["ordered"] = strings.Join(rates, "; ")
}

// orderedCost is what the phase's ordered deliveries cost Temporal, per
// delivery: the history events and billable actions (billableActions) of
// every run of each of its keys' Sequencers (continued as new, or still
// waiting for work) and of every Delivery child they started.
func (r *shippedRun) orderedCost(subID string, p publisher, deliveries int) string {
	events, actions, children := 0, 0, map[string]bool{}
	add := func(id, run string) string {
		h, err := historyRun(r.c, id, run)
		if err != nil || len(h) == 0 {
			r.b.Errorf("history of %s (run %q): %v", id, run, err)
			return ""
		}
		events, actions = events+len(h), actions+billableActions(h)
		for _, e := range h {
			if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
				children[a.GetWorkflowId()] = true
			}
		}
		return h[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	}
	for k := range p.orderingKeys {
		id := workflows.SequencerWorkflowID(subID, p.orderingKey(k))
		for run := add(id, ""); run != ""; {
			run = add(id, run)
		}
	}
	for id := range children {
		add(id, "")
	}
	n := float64(max(deliveries, 1))
	return fmt.Sprintf("%.1f history events, %.2f billable actions (%d Delivery children)",
		float64(events)/n, float64(actions)/n, len(children))
}

// outOfOrder counts the deliveries of the subscription's keys starting
// with prefix that PostgreSQL did not record as delivered one at a time in
// their key's order: not delivered, or first attempted before the delivery
// numbered before it in its key had finished.
func outOfOrder(url, subID, prefix string) (int, error) {
	db, err := sql.Open("postgres", url)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n int
	err = db.QueryRowContext(ctx, `WITH d AS (
			SELECT d.status, (SELECT min(a.started_at) FROM attempts a WHERE a.delivery_id = d.id) AS first_attempt,
				lag(d.finished_at) OVER (PARTITION BY d.ordering_key ORDER BY d.seq) AS prev_finished
			FROM deliveries d WHERE d.subscription_id = $1 AND d.ordering_key LIKE $2)
		SELECT count(*) FROM d WHERE status <> 'delivered' OR first_attempt IS NULL OR first_attempt < prev_finished`,
		subID, prefix+"-%").Scan(&n)
	return n, errors.Join(err, db.Close())
}
