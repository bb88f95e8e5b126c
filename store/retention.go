package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hookrelay/hookrelay/policies"
)

// PruneBatch is how many rows one pruning statement looks at: each statement
// is short, so none holds its locks for long.
const PruneBatch = 500

// Retention says what Prune deletes; a zero time deletes nothing of its kind.
type Retention struct {
	// Finished: the deliveries that ended before it, with their attempts
	// and batches, and the events created before it that have no delivery
	// left.
	Finished time.Time
	// DeadLetters: the dead letters made before it.
	DeadLetters time.Time
	// Batch is how many rows one statement looks at; 0 means PruneBatch.
	Batch int
}

// Pruned counts the rows Prune deleted, per table.
type Pruned struct {
	DeadLetters int64 `db:"dead_letters"`
	Deliveries  int64 `db:"deliveries"`
	Attempts    int64 `db:"attempts"`
	Batches     int64 `db:"batches"`
	Events      int64 `db:"events"`
}

// Total is how many rows were deleted in all.
func (p Pruned) Total() int64 {
	return p.DeadLetters + p.Deliveries + p.Attempts + p.Batches + p.Events
}

func (p *Pruned) add(q Pruned) {
	p.DeadLetters += q.DeadLetters
	p.Deliveries += q.Deliveries
	p.Attempts += q.Attempts
	p.Batches += q.Batches
	p.Events += q.Events
}

// Prune deletes what r's retention is over, r.Batch rows per statement,
// until none is left or ctx ends, and returns what it deleted (also when it
// fails part way: each statement commits on its own). Nothing under way is
// deleted:
//
//   - dead letters made before r.DeadLetters go first;
//   - then the deliveries of one event to one subscription (a delivery, and
//     the redrives, retries and redeliveries that followed it: they refer to
//     one another) go together, with their attempts, once every one of them
//     has ended (policies.EndedStatuses: not in flight, not queued), ended
//     before r.Finished and has no dead letter left; an Event Grid batch
//     goes with the last of its deliveries;
//   - then the events created before r.Finished that have no delivery and
//     no dead letter left.
func (s *Store) Prune(ctx context.Context, r Retention) (Pruned, error) {
	var p Pruned
	if r.Batch <= 0 {
		r.Batch = PruneBatch
	}
	if !r.DeadLetters.IsZero() {
		if err := s.pruneDeadLetters(ctx, r, &p); err != nil {
			return p, err
		}
	}
	if r.Finished.IsZero() {
		return p, nil
	}
	if err := s.walk(ctx, pruneDeliveriesSQL, r, &p); err != nil {
		return p, fmt.Errorf("store: prune deliveries: %w", err)
	}
	if err := s.walk(ctx, pruneEventsSQL, r, &p); err != nil {
		return p, fmt.Errorf("store: prune events: %w", err)
	}
	return p, nil
}

// pruneDeadLetters deletes the dead letters made before r.DeadLetters.
func (s *Store) pruneDeadLetters(ctx context.Context, r Retention, p *Pruned) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := s.db.ExecContext(ctx, `DELETE FROM dead_letters WHERE id IN (
			SELECT id FROM dead_letters WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
			r.DeadLetters, r.Batch)
		if err != nil {
			return fmt.Errorf("store: prune dead letters: %w", err)
		}
		n, _ := res.RowsAffected()
		p.DeadLetters += n
		if n < int64(r.Batch) {
			return nil
		}
	}
}

// pruneStep is what one statement of walk did: how many rows it looked at,
// the last of them (where the next statement starts) and what it deleted.
type pruneStep struct {
	Scanned int            `db:"scanned"`
	LastAt  sql.NullTime   `db:"last_at"`
	LastID  sql.NullString `db:"last_id"`
	Pruned
}

// walk runs q, a pruning statement, over the rows older than r.Finished,
// oldest first, r.Batch rows at a time: q's $1 is the cutoff, $2 the batch
// size and ($3, $4) the (time, id) to start after. Rows that must stay are
// passed over, so each run reads them once.
func (s *Store) walk(ctx context.Context, q string, r Retention, p *Pruned) error {
	var at time.Time
	id := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var step pruneStep
		if err := s.db.GetContext(ctx, &step, q, r.Finished, r.Batch, at, id); err != nil {
			return err
		}
		p.add(step.Pruned)
		if step.Scanned < r.Batch {
			return nil
		}
		at, id = step.LastAt.Time, step.LastID.String
	}
}

// endedSQL lists the statuses of deliveries that retention may delete.
var endedSQL = policies.SQLList(policies.EndedStatuses)

// pruneDeliveriesSQL is walk's statement over finished deliveries (index
// deliveries_finished). A group is one event's deliveries to one
// subscription; the foreign keys between them are checked at the end of the
// statement, once all of them are gone. A delivery's last change
// (updated_at) dates its ending: one queued at publication and redelivered
// since has no finished_at. Anything inserted meanwhile that
// refers to a deleted row makes the statement fail and change nothing.
var pruneDeliveriesSQL = `WITH scan AS (
		SELECT id, event_id, subscription_id, finished_at FROM deliveries
		WHERE finished_at < $1 AND (finished_at, id) > ($3, $4)
		ORDER BY finished_at, id LIMIT $2),
	grp AS (
		SELECT DISTINCT s.event_id, s.subscription_id FROM scan s
		WHERE NOT EXISTS (SELECT 1 FROM deliveries o
			WHERE o.event_id = s.event_id AND o.subscription_id = s.subscription_id
			AND (o.status NOT IN ` + endedSQL + ` OR o.updated_at >= $1 OR o.finished_at >= $1))
		AND NOT EXISTS (SELECT 1 FROM dead_letters l
			WHERE l.event_id = s.event_id AND l.subscription_id = s.subscription_id)),
	doomed AS (
		SELECT d.id, d.batch_id FROM deliveries d
		JOIN grp g ON g.event_id = d.event_id AND g.subscription_id = d.subscription_id
		FOR UPDATE OF d),
	att AS (DELETE FROM attempts a USING doomed WHERE a.delivery_id = doomed.id RETURNING 1),
	del AS (DELETE FROM deliveries d USING doomed WHERE d.id = doomed.id RETURNING 1),
	bat AS (DELETE FROM eventgrid_batches b WHERE b.id IN (SELECT batch_id FROM doomed)
		AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = ANY(b.delivery_ids)
			AND d.id NOT IN (SELECT id FROM doomed))
		RETURNING 1),
	last AS (SELECT finished_at, id FROM scan ORDER BY finished_at DESC, id DESC LIMIT 1)
	SELECT (SELECT count(*) FROM scan) AS scanned,
		(SELECT finished_at FROM last) AS last_at, (SELECT id FROM last) AS last_id,
		(SELECT count(*) FROM del) AS deliveries, (SELECT count(*) FROM att) AS attempts,
		(SELECT count(*) FROM bat) AS batches`

// pruneEventsSQL is walk's statement over old events (index events_created):
// those with no delivery and no dead letter left go.
const pruneEventsSQL = `WITH scan AS (
		SELECT id, created_at FROM events
		WHERE created_at < $1 AND (created_at, id) > ($3, $4)
		ORDER BY created_at, id LIMIT $2),
	gone AS (DELETE FROM events e USING scan s WHERE e.id = s.id
		AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
		AND NOT EXISTS (SELECT 1 FROM dead_letters l WHERE l.event_id = e.id)
		RETURNING 1),
	last AS (SELECT created_at, id FROM scan ORDER BY created_at DESC, id DESC LIMIT 1)
	SELECT (SELECT count(*) FROM scan) AS scanned,
		(SELECT created_at FROM last) AS last_at, (SELECT id FROM last) AS last_id,
		(SELECT count(*) FROM gone) AS events`
