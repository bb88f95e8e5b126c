// Package chaos is hookrelay's reliability suite (issue 14): the servers run
// as separate processes, as docs/operations.md#running-the-parts-separately
// runs them, and are killed and restarted under a steady publish; every event the
// API accepted is then reconciled to its final status, and every attempts
// row to the requests the receiver logged. `make chaos` runs every
// scenario; `make test` runs a short one. The receiver and the
// reconciliation are also the cluster's (cluster/, `make test-cluster`).
package chaos

import (
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// Subscription is the body of a scenario's subscription: events of type typ
// to the receiver at url, path /scenario/behaviour, with fixed 1 s gaps, 30
// attempts, AttemptTimeout and dead-lettering.
func Subscription(url, scenario, behaviour, typ string) string {
	return fmt.Sprintf(`{"url": %q, "event_types": [%q], "policy": "custom", "retry_policy":
		{"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 30, "timeout_seconds": %d, "dead_lettering": true}}`,
		url+"/"+scenario+"/"+behaviour, typ, int(AttemptTimeout.Seconds()))
}

// Tally is what a scenario's reconciliation found.
type Tally struct {
	Published, Lost, Stuck, Duplicates int
	Statuses                           map[policies.Status]int
	Rows, Unknown, Requests            int            // attempts rows (Match), those closed unknown, requests logged
	Cut                                int            // rows a fault cut off before their request (Match)
	Unmatched                          []string       // deliveries whose rows and requests differ otherwise
	Reasons                            map[string]int // of the deliveries not delivered
	Settle                             time.Duration
}

// Settle waits until every delivery of the subscription has ended, and
// returns how many had not after limit (stuck).
func Settle(db *sqlx.DB, subID string, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		var open int
		err := db.Get(&open, `SELECT count(*) FROM deliveries WHERE subscription_id = $1
			AND status NOT IN `+policies.SQLList(policies.FinalStatuses), subID)
		if err == nil && open == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			return open
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Reconcile counts into t the accepted events (keys, their Idempotency-Keys)
// that were not stored with a delivery to the subscription (lost), the
// deliveries by status, and why those not delivered ended; Match counts
// the attempts rows.
func Reconcile(db *sqlx.DB, subID string, keys []string, t *Tally) error {
	err := db.Get(&t.Lost, `SELECT count(*) FROM unnest($1::text[]) k WHERE NOT EXISTS
		(SELECT 1 FROM events e JOIN deliveries d ON d.event_id = e.id AND d.subscription_id = $3
		 WHERE e.account_id = $2 AND e.external_id = k)`, pq.Array(keys), store.DefaultAccount, subID)
	if err != nil {
		return err
	}
	var rows []struct {
		Status policies.Status `db:"status"`
		N      int             `db:"n"`
	}
	if err := db.Select(&rows, `SELECT status, count(*) AS n FROM deliveries WHERE subscription_id = $1
		GROUP BY status`, subID); err != nil {
		return err
	}
	t.Statuses = map[policies.Status]int{}
	for _, row := range rows {
		t.Statuses[row.Status] = row.N
	}
	var ends []struct {
		Reason string `db:"final_reason"`
		N      int    `db:"n"`
	}
	if err := db.Select(&ends, `SELECT final_reason, count(*) AS n FROM deliveries WHERE subscription_id = $1
		AND status <> 'delivered' GROUP BY final_reason`, subID); err != nil {
		return err
	}
	t.Reasons = map[string]int{}
	for _, e := range ends {
		t.Reasons[e.Reason] = e.N
	}
	return nil
}
