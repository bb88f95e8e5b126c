package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/policies"
)

// anyOrdered tells whether a delivery of ds goes to an ordered subscription
// and waits to be numbered (sequence).
func anyOrdered(ds []Delivery) bool {
	return slices.ContainsFunc(ds, func(d Delivery) bool { return d.OrderingKey != nil && d.Seq == nil })
}

// sequenceSQL locks, for the rest of the transaction, every (subscription,
// ordering key) of $1 (an advisory lock on a hash of each, taken in hash
// order so that two transactions never wait on each other in a circle), and
// only then takes $2 numbers from delivery_seq. A publication of the same
// key waits for this transaction to commit before it takes its own numbers,
// so within a key the numbers follow the order of the commits; the numbers
// are only read (0 * n) once the locks are held.
const sequenceSQL = `WITH locked AS MATERIALIZED (
		SELECT count(pg_advisory_xact_lock(h)) AS n FROM
			(SELECT DISTINCT hashtextextended(k, 26) AS h FROM unnest($1::text[]) AS k ORDER BY 1) AS keys)
	SELECT nextval('delivery_seq') + 0 * locked.n AS seq FROM locked, generate_series(1, $2)`

// sequence numbers, within tx, the deliveries of ds to ordered subscriptions
// (an ordering key and no number yet): each gets the next number of its
// (subscription, key) sequence, in the order of ds, and the key stays
// locked until tx ends. It runs nothing when there are none.
func sequence(ctx context.Context, tx sqlx.QueryerContext, ds []Delivery) error {
	var idx []int
	var keys []string
	for i, d := range ds {
		if d.OrderingKey != nil && d.Seq == nil {
			idx = append(idx, i)
			keys = append(keys, d.SubscriptionID+"/"+*d.OrderingKey)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	var seqs []int64
	if err := sqlx.SelectContext(ctx, tx, &seqs, sequenceSQL, pq.Array(keys), len(idx)); err != nil {
		return fmt.Errorf("store: number ordered deliveries: %w", err)
	}
	slices.Sort(seqs)
	for j, i := range idx {
		ds[i].Seq = &seqs[j]
	}
	return nil
}

// orderFollowUps marks, within tx, the follow-ups ds (retries, redrives,
// recoveries, redeliveries, replays) whose subscription is ordered now with
// their event's ordering key, and numbers them (sequence): they join the end
// of their sequence, in the order of ds.
func orderFollowUps(ctx context.Context, tx *sqlx.Tx, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	subs, events := make([]string, len(ds)), make([]string, len(ds))
	for i, d := range ds {
		subs[i], events[i] = d.SubscriptionID, d.EventID
	}
	var rows []struct {
		I   int    `db:"i"`
		Key string `db:"ordering_key"`
	}
	err := tx.SelectContext(ctx, &rows, `SELECT u.i, COALESCE(e.ordering_key, '') AS ordering_key
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(sub, ev, i)
		JOIN subscriptions s ON s.id = u.sub AND s.ordered
		JOIN events e ON e.id = u.ev`, pq.Array(subs), pq.Array(events))
	if err != nil {
		return fmt.Errorf("store: ordered follow-ups: %w", err)
	}
	for _, r := range rows {
		if ds[r.I-1].Status == policies.StatusPending {
			ds[r.I-1].OrderingKey = &r.Key
		}
	}
	return sequence(ctx, tx, ds)
}

// NextInSequence returns the delivery still under way with the lowest
// number above after in the sequence of (subscription, ordering key), and
// false when there is none: the next one its sequencer starts.
func (s *Store) NextInSequence(ctx context.Context, subscriptionID, key string, after int64) (Delivery, bool, error) {
	var ds []Delivery
	err := s.db.SelectContext(ctx, &ds, `SELECT `+deliveryCols+` FROM deliveries
		WHERE subscription_id = $1 AND ordering_key = $2 AND seq > $3
		  AND seq IS NOT NULL AND status IN `+inFlightSQL+`
		ORDER BY seq LIMIT 1`, subscriptionID, key, after)
	if err != nil {
		return Delivery{}, false, fmt.Errorf("store: next in sequence: %w", err)
	}
	if len(ds) == 0 {
		return Delivery{}, false, nil
	}
	return ds[0], true, nil
}

// Sequence is one ordering key of an ordered subscription with deliveries
// still under way: the first of them, which the others wait behind, and how
// many wait.
type Sequence struct {
	OrderingKey string   `json:"ordering_key"`
	Head        Delivery `json:"blocking_delivery"`
	Waiting     int      `json:"waiting"`
}

// Sequences lists the sequences of a subscription with deliveries under
// way, those whose first delivery is the oldest first, at most limit.
func (s *Store) Sequences(ctx context.Context, subscriptionID string, limit int) ([]Sequence, error) {
	var rows []struct {
		Delivery
		Waiting int `db:"waiting"`
	}
	err := s.db.SelectContext(ctx, &rows, `WITH k AS (SELECT ordering_key, min(seq) AS head, count(*) AS n
			FROM deliveries WHERE subscription_id = $1 AND seq IS NOT NULL AND status IN `+inFlightSQL+`
			GROUP BY ordering_key)
		SELECT `+prefixed("d", deliveryCols)+`, k.n - 1 AS waiting FROM k
		JOIN deliveries d ON d.subscription_id = $1 AND d.ordering_key = k.ordering_key AND d.seq = k.head
			AND d.status IN `+inFlightSQL+`
		ORDER BY d.seq LIMIT $2`, subscriptionID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: sequences: %w", err)
	}
	out := make([]Sequence, len(rows))
	for i, r := range rows {
		out[i] = Sequence{OrderingKey: *r.OrderingKey, Head: r.Delivery, Waiting: r.Waiting}
	}
	return out, nil
}

// inSequenceOrder reorders, among themselves, the deliveries of ds that
// have a number, by number, leaving the others where they are: follow-ups
// made from them in this order re-enter their sequences in their first
// order.
func inSequenceOrder(ds []Delivery) {
	var at []int
	var numbered []Delivery
	for i, d := range ds {
		if d.Seq != nil {
			at, numbered = append(at, i), append(numbered, d)
		}
	}
	slices.SortStableFunc(numbered, func(a, b Delivery) int { return cmp.Compare(*a.Seq, *b.Seq) })
	for j, i := range at {
		ds[i] = numbered[j]
	}
}
