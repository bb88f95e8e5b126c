package chaos

import (
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/store"
)

// oddRow is an attempts row of a delivery a crash left a row unknown of.
type oddRow struct {
	ID         int64     `db:"id"`
	DeliveryID string    `db:"delivery_id"`
	Status     string    `db:"status"`
	Attempt    int       `db:"attempt"`
	Try        int       `db:"try"`
	ErrorKind  string    `db:"error_kind"`
	StatusCode int       `db:"status_code"`
	StartedAt  time.Time `db:"started_at"`
	DurationMs float64   `db:"duration_ms"`
}

// oddRows describes every attempts row of the subscription's deliveries
// that have a row a crash left unknown, each delivery's in order, with
// how many requests the receiver logged for it (requestsFor; nil when it
// cannot tell): what a reconciliation that finds more rows than requests
// prints, to tell where the row came from.
func oddRows(db *sqlx.DB, subID string, requestsFor func(deliveryID string) int) ([]string, error) {
	var rows []oddRow
	err := db.Select(&rows, `SELECT a.id, a.delivery_id, d.status, a.attempt, a.try, a.error_kind,
			a.status_code, a.started_at, a.duration_ms
		FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
		WHERE d.subscription_id = $1 AND a.delivery_id IN
			(SELECT delivery_id FROM attempts WHERE error_kind = $2)
		ORDER BY a.delivery_id, a.id`, subID, store.KindUnknown)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		seen := "?"
		if requestsFor != nil {
			seen = fmt.Sprint(requestsFor(r.DeliveryID))
		}
		out = append(out, fmt.Sprintf("%s (%s, %s requests seen): row %d attempt %d try %d %q %d at %s for %.1f ms",
			r.DeliveryID, r.Status, seen, r.ID, r.Attempt, r.Try, r.ErrorKind, r.StatusCode,
			r.StartedAt.Format("15:04:05.000"), r.DurationMs))
	}
	return out, nil
}
