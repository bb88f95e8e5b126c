package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/secrets"
)

// Event is one published event; its body stays here, workflows carry its id.
type Event struct {
	ID         string    `db:"id" json:"-"`
	AccountID  string    `db:"account_id" json:"-"`
	ExternalID string    `db:"external_id" json:"id"`
	Type       string    `db:"type" json:"type"`
	Subject    string    `db:"subject" json:"subject,omitempty"`
	Data       RawJSON   `db:"data" json:"data"`
	OccurredAt time.Time `db:"occurred_at" json:"time"`
	CreatedAt  time.Time `db:"created_at" json:"created_at"`
	// OrderingKey is the key the event was published with, for the
	// subscriptions that deliver in order ("" for none: all of their events
	// then form one sequence).
	OrderingKey string `db:"ordering_key" json:"ordering_key,omitempty"`
	// Fields are the Event Grid and CloudEvents schema fields, stored with
	// the event in the same transaction.
	Fields EventFields `db:"-" json:"-"`
}

// Delivery is one event on its way to one subscription.
type Delivery struct {
	ID             string          `db:"id" json:"id"`
	AccountID      string          `db:"account_id" json:"-"`
	EventID        string          `db:"event_id" json:"-"`
	SubscriptionID string          `db:"subscription_id" json:"subscription_id"`
	EndpointID     string          `db:"endpoint_id" json:"endpoint_id"`
	EventType      string          `db:"event_type" json:"event_type"`
	Policy         string          `db:"policy" json:"policy"`
	Status         policies.Status `db:"status" json:"status"`
	Attempts       int             `db:"attempts" json:"attempts"`
	WorkflowID     string          `db:"workflow_id" json:"workflow_id"`
	Started        bool            `db:"started" json:"-"`
	PreviousID     *string         `db:"previous_id" json:"previous_id,omitempty"`
	NextAttemptAt  *time.Time      `db:"next_attempt_at" json:"next_attempt_at,omitempty"`
	FinalReason    string          `db:"final_reason" json:"final_reason,omitempty"`
	CreatedAt      time.Time       `db:"created_at" json:"created_at"`
	UpdatedAt      time.Time       `db:"updated_at" json:"updated_at"`
	FinishedAt     *time.Time      `db:"finished_at" json:"finished_at,omitempty"`
	// OrderingKey and Seq are set on a delivery to an ordered subscription
	// (docs/ordering.md): its event's ordering key and its place in that
	// key's sequence. Nil on every other delivery.
	OrderingKey *string `db:"ordering_key" json:"ordering_key,omitempty"`
	Seq         *int64  `db:"seq" json:"seq,omitempty"`
	// TraceParent is the W3C traceparent of the request that stored the
	// delivery, carried in memory to its workflow's start while tracing is
	// on (docs/tracing.md); never stored.
	TraceParent string `db:"-" json:"-"`
	// Subscription is the delivery's subscription as publishing matched
	// it, carried in memory to its workflow's start; nil when not loaded.
	Subscription *Subscription `db:"-" json:"-"`
	// first is its first attempt, when publishing hands it over
	// (FirstAttempts): the target, and the row the publish opens for it.
	first *firstAttempt
}

const deliveryCols = `id, account_id, event_id, subscription_id, endpoint_id, event_type, policy, status,
	attempts, workflow_id, started, previous_id, next_attempt_at, final_reason,
	created_at, updated_at, finished_at, ordering_key, seq`

// PublishResult is what Publish stored, or found stored before.
type PublishResult struct {
	Event      Event
	Deliveries []Delivery
	// Duplicate is true when the event id had been published before; the
	// deliveries are then the ones made the first time.
	Duplicate bool
}

// Publish stores ev and one delivery per matching subscription, atomically.
// An event id published before returns the first publication. Deliveries to
// inactive subscriptions are queued at once (docs/policies.md#sap); those of
// accounts in queue mode are pushed once first (Subscription.AccountQueueMode). It takes two round trips to PostgreSQL and no
// transaction of its own: the subscriptions are matched, then the event and
// its deliveries inserted in one statement. Only when an ordered
// subscription matches does it take a transaction, to number the deliveries
// in their sequences (sequence) as they are inserted. With FirstAttempts
// shared (ShareFirstAttempts), it hands the target of each delivery whose
// first attempt may go at once over to the worker of this process.
func (s *Store) Publish(ctx context.Context, ev Event) (PublishResult, error) {
	newEvent(&ev)
	ds, err := fanOut(ctx, s.prep, s.keys, ev)
	reserved := keepFirsts(s.firsts, ev, ds)
	var res PublishResult
	if err != nil || !anyOrdered(ds) {
		res, err = insertPublished(ctx, s.prep, ev, ds, err)
	} else {
		err = s.inTx(ctx, func(tx *sqlx.Tx) error {
			res, err = insertPublished(ctx, tx, ev, ds, sequence(ctx, tx, ds))
			return err
		})
	}
	s.firsts.handOver(ds, res, reserved, err)
	return res, err
}

// publishTx is Publish within tx.
func publishTx(ctx context.Context, tx *sqlx.Tx, ev Event) (PublishResult, error) {
	newEvent(&ev)
	ds, err := fanOut(ctx, tx, nil, ev)
	keepFirsts(nil, ev, ds)
	if err == nil {
		err = sequence(ctx, tx, ds)
	}
	return insertPublished(ctx, tx, ev, ds, err)
}

// newEvent gives ev its id, and its id as its external id when it has none.
func newEvent(ev *Event) {
	if ev.ID == "" {
		ev.ID = NewID("evt")
	}
	if ev.ExternalID == "" {
		ev.ExternalID = ev.ID
	}
}

// insertPublished inserts ev and its deliveries ds through q, a database or
// a transaction, unless err (of the steps before) is set; an event id
// published before returns the first publication.
func insertPublished(ctx context.Context, q sqlx.QueryerContext, ev Event, ds []Delivery, err error) (PublishResult, error) {
	if err != nil {
		return PublishResult{}, err
	}
	inserted, err := insertEvent(ctx, q, &ev, ds)
	if err != nil {
		return PublishResult{}, err
	}
	if !inserted {
		res := PublishResult{Duplicate: true}
		return res, loadPublished(ctx, q, ev.AccountID, ev.ExternalID, &res)
	}
	return PublishResult{Event: ev, Deliveries: ds}, nil
}

// insertEvent inserts ev and its deliveries ds in one statement, filling in
// their times: none of them when ev's id was published before (false).
// When any delivery is handed over (first), the same statement opens its
// first attempt's row (first.row), and ev's body and extensions become those
// stored, for that attempt to send.
func insertEvent(ctx context.Context, q sqlx.QueryerContext, ev *Event, ds []Delivery) (bool, error) {
	f := ev.Fields
	if len(f.Extensions) == 0 {
		f.Extensions = RawJSON("{}")
	}
	var row struct {
		OccurredAt time.Time      `db:"occurred_at"`
		CreatedAt  time.Time      `db:"created_at"`
		Deliveries sql.NullTime   `db:"deliveries_created_at"`
		Updated    sql.NullTime   `db:"deliveries_updated_at"`
		Data       RawJSON        `db:"stored_data"`
		Extensions RawJSON        `db:"stored_extensions"`
		Opened     pq.StringArray `db:"opened_deliveries"`
		Rows       pq.Int64Array  `db:"opened_rows"`
	}
	args := append(deliveryArgs(ds), ev.ID, ev.AccountID, ev.ExternalID, ev.Type, ev.Subject, ev.Data,
		nullTime(ev.OccurredAt), f.DataVersion, f.Source, f.DataContentType, f.Extensions, ev.OrderingKey, anyFirst(ds),
		KindInFlight)
	err := sqlx.GetContext(ctx, q, &row, insertEventSQL, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: insert event: %w", err)
	}
	ev.OccurredAt, ev.CreatedAt = row.OccurredAt, row.CreatedAt
	insertedTimes{CreatedAt: row.Deliveries, UpdatedAt: row.Updated}.fill(ds)
	if row.Data != nil {
		ev.Data, ev.Fields.Extensions = row.Data, row.Extensions
	}
	for i := range ds {
		if j := slices.Index(row.Opened, ds[i].ID); j >= 0 {
			ds[i].first.row = row.Rows[j]
		}
	}
	return true, nil
}

// insertEventSQL is insertEvent's statement: the event (ev), its
// deliveries (ins, deliveryArgs $1 to $15), the open rows of the first
// attempts handed over (opened: those given a time in $15, error kind $29),
// and the event's body and extensions as stored when $28.
const insertEventSQL = `WITH ev AS (INSERT INTO events
		(id, account_id, external_id, type, subject, data, occurred_at,
		 data_version, source, data_content_type, extensions, ordering_key)
		VALUES ($16, $17, $18, $19, $20, $21, COALESCE($22, now()), $23, $24, $25, $26, NULLIF($27, ''))
		ON CONFLICT (account_id, external_id) DO NOTHING
		RETURNING occurred_at, created_at, data, extensions),
	ins AS (` + insertDeliveriesSQL + ` WHERE EXISTS (SELECT 1 FROM ev)
		RETURNING created_at, updated_at),
	opened AS (INSERT INTO attempts (delivery_id, attempt, try, scheduled_at, started_at, duration_ms, error_kind, success)
		SELECT u.id, 0, 0, u.at::timestamptz, u.at::timestamptz, 0, $29, false
		FROM unnest($1::text[], $15::text[]) AS u(id, at) WHERE u.at <> '' AND EXISTS (SELECT 1 FROM ev)
		RETURNING id, delivery_id)
	SELECT ev.occurred_at, ev.created_at,
		(SELECT created_at FROM ins LIMIT 1) AS deliveries_created_at,
		(SELECT updated_at FROM ins LIMIT 1) AS deliveries_updated_at,
		CASE WHEN $28 THEN ev.data END AS stored_data,
		CASE WHEN $28 THEN ev.extensions END AS stored_extensions,
		(SELECT array_agg(delivery_id ORDER BY delivery_id) FROM opened) AS opened_deliveries,
		(SELECT array_agg(id ORDER BY delivery_id) FROM opened) AS opened_rows
	FROM ev`

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// fanOut is one new delivery of ev per subscription matching its type, in
// subscription order (none inserted yet), each carrying its subscription;
// those to ordered subscriptions carry ev's ordering key, to be numbered
// (sequence), and those whose first attempt may go at once (opensAtOnce)
// the target it would have, for Publish to hand over (none when its
// secrets do not open with keys: its attempt then fails as Target's does).
func fanOut(ctx context.Context, q sqlx.QueryerContext, keys *secrets.Ring, ev Event) ([]Delivery, error) {
	var matched []struct {
		Subscription
		Limits
		State           string `db:"state"`
		Queue           bool   `db:"queue"`
		PreviousInForce bool   `db:"previous_in_force"`
	}
	err := sqlx.SelectContext(ctx, q, &matched, `SELECT `+prefixed("s", subscriptionCols)+`, p.state, `+limitCols+`,
			NOT s.active AS queue, a.mode = 'queue' AS account_queue_mode,
			`+previousInForceSQL+` AS previous_in_force
		FROM subscriptions s JOIN accounts a ON a.id = s.account_id JOIN endpoints p ON p.id = s.endpoint_id
		WHERE s.account_id = $1 AND s.deleted_at IS NULL
		  AND (cardinality(s.event_types) = 0 OR $2 = ANY(s.event_types) OR '*' = ANY(s.event_types))
		ORDER BY s.created_at, s.id`, ev.AccountID, ev.Type)
	if err != nil {
		return nil, fmt.Errorf("store: match subscriptions: %w", err)
	}
	out := make([]Delivery, 0, len(matched))
	for _, m := range matched {
		sub := m.Subscription
		d := newDelivery(Delivery{AccountID: ev.AccountID, EventID: ev.ID, EventType: ev.Type,
			SubscriptionID: sub.ID, EndpointID: sub.EndpointID, Policy: sub.Policy}, nil)
		d.Subscription = &sub
		switch {
		case m.Queue:
			d.Status, d.Started, d.FinalReason = policies.StatusQueued, true, "subscription inactive"
		case sub.Ordered:
			d.OrderingKey = &ev.OrderingKey // numbered by sequence before it is inserted
		}
		if opensAtOnce(sub, m.Queue, m.State, m.Limits) {
			if t, ok := subscriptionTarget(keys, sub, m.State, m.Limits, m.PreviousInForce); ok {
				d.first = &firstAttempt{t: t}
			}
		}
		out = append(out, d)
	}
	return out, nil
}

func loadPublished(ctx context.Context, q sqlx.QueryerContext, account, externalID string, res *PublishResult) error {
	err := sqlx.GetContext(ctx, q, &res.Event, `SELECT `+eventCols+` FROM events
		WHERE account_id = $1 AND external_id = $2`, account, externalID)
	if err != nil {
		return notFound(err, "event", externalID)
	}
	res.Deliveries = []Delivery{}
	err = sqlx.SelectContext(ctx, q, &res.Deliveries, `SELECT `+deliveryCols+` FROM deliveries
		WHERE event_id = $1 AND previous_id IS NULL ORDER BY created_at, id`, res.Event.ID)
	if err != nil {
		return fmt.Errorf("store: load deliveries: %w", err)
	}
	return nil
}

const eventCols = `id, account_id, external_id, type, subject, data, occurred_at, created_at,
	COALESCE(ordering_key, '') AS ordering_key`

// MarkStarted records that the workflows of these deliveries were started.
// It skips the rows another transaction holds: those of deliveries whose
// first attempt is being begun, which marks them started itself
// (BeginTarget), so that neither waits for the other; the rows it takes it
// locks as any update of a non-key column does (FOR NO KEY UPDATE), which
// lets an attempts row for them be inserted meanwhile. A row it skipped that
// nothing marks is one more for the sweeper, whose start finds the
// workflow there and marks it.
func (s *Store) MarkStarted(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.prep.ExecContext(ctx, `UPDATE deliveries SET started = true WHERE id IN
		(SELECT id FROM deliveries WHERE id = ANY($1) AND NOT started FOR NO KEY UPDATE SKIP LOCKED)`,
		pq.StringArray(ids))
	if err != nil {
		return fmt.Errorf("store: mark started: %w", err)
	}
	return nil
}

// UnstartedDeliveries returns deliveries whose workflow was never recorded as
// started, that are older than age and whose start is not put off after a
// failure (StartFailed): the outbox a sweeper restarts, those never tried
// first. Deliveries of Event Grid subscriptions awaiting their handshake or
// batching their output are left out: they are not started one by one.
func (s *Store) UnstartedDeliveries(ctx context.Context, age time.Duration, limit int) ([]Delivery, error) {
	ds := []Delivery{}
	err := s.db.SelectContext(ctx, &ds, `SELECT `+deliveryCols+` FROM deliveries
		WHERE NOT started AND created_at < now() - $1 * interval '1 millisecond'
		  AND (next_start_at IS NULL OR next_start_at <= now())
		  AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = deliveries.subscription_id
		      AND (s.options->'eventgrid'->>'validation' IN ('pending', 'failed')
		        OR COALESCE((s.options->'eventgrid'->>'max_events_per_batch')::int, 0) > 0))
		ORDER BY start_attempts, created_at LIMIT $2`, age.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: unstarted deliveries: %w", err)
	}
	return ds, nil
}
