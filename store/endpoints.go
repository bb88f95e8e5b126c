package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Endpoint is one URL of an account with its health counters
// (docs/policies.md#workfront-circuit-breaker).
type Endpoint struct {
	ID                  string     `db:"id" json:"id"`
	AccountID           string     `db:"account_id" json:"-"`
	URL                 string     `db:"url" json:"url"`
	State               string     `db:"state" json:"state"`
	Attempts            int64      `db:"attempts" json:"attempts"`
	Failures            int64      `db:"failures" json:"failures"`
	ConsecutiveFailures int64      `db:"consecutive_failures" json:"consecutive_failures"`
	LastSuccessAt       *time.Time `db:"last_success_at" json:"last_success_at,omitempty"`
	LastFailureAt       *time.Time `db:"last_failure_at" json:"last_failure_at,omitempty"`
	CountedSince        *time.Time `db:"counted_since" json:"counted_since,omitempty"`
	Health              RawJSON    `db:"health" json:"health"`
	// Rules are the circuit-breaker rules the endpoint took when it was made
	// (a policies.HealthDoc; health.Service.Rules applies Health over them),
	// or empty for an endpoint made before they were stored with it.
	Rules     RawJSON   `db:"rules" json:"-"`
	CreatedAt time.Time `db:"created_at" json:"created_at"`
	UpdatedAt time.Time `db:"updated_at" json:"updated_at"`
	// Limits protect the receiver (PUT /v1/endpoints/{id}/limits).
	Limits `json:"limits"`
}

const endpointCols = `id, account_id, url, state, attempts, failures, consecutive_failures,
	last_success_at, last_failure_at, counted_since, health, rules, created_at, updated_at,
	max_concurrency, rate_limit, rate_limit_period_seconds`

// StateChange is one recorded change of an endpoint's state.
type StateChange struct {
	ID         int64     `db:"id" json:"-"`
	EndpointID string    `db:"endpoint_id" json:"-"`
	From       string    `db:"from_state" json:"from"`
	To         string    `db:"to_state" json:"to"`
	Reason     string    `db:"reason" json:"reason"`
	ChangedAt  time.Time `db:"changed_at" json:"changed_at"`
}

// GetEndpoint returns the account's endpoint with this id.
func (s *Store) GetEndpoint(ctx context.Context, account, id string) (Endpoint, error) {
	var e Endpoint
	err := s.db.GetContext(ctx, &e, `SELECT `+endpointCols+` FROM endpoints
		WHERE id = $1 AND account_id = $2`, id, account)
	if err != nil {
		return Endpoint{}, notFound(err, "endpoint", id)
	}
	return e, nil
}

// EndpointByID returns the endpoint with this id, whatever its account.
func (s *Store) EndpointByID(ctx context.Context, id string) (Endpoint, error) {
	var e Endpoint
	err := s.db.GetContext(ctx, &e, `SELECT `+endpointCols+` FROM endpoints WHERE id = $1`, id)
	if err != nil {
		return Endpoint{}, notFound(err, "endpoint", id)
	}
	return e, nil
}

// StateChanges lists an endpoint's state changes, oldest first, at most limit.
func (s *Store) StateChanges(ctx context.Context, endpointID string, limit int) ([]StateChange, error) {
	cs := []StateChange{}
	err := s.db.SelectContext(ctx, &cs, `SELECT * FROM (SELECT id, endpoint_id, from_state, to_state,
			reason, changed_at FROM endpoint_state_changes WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2) c
		ORDER BY id`, endpointID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: state changes: %w", err)
	}
	return cs, nil
}

// HealthCounts are an endpoint's counters with the sums of its sliding window.
type HealthCounts struct {
	State          string    `db:"state"`
	WindowAttempts int64     `db:"window_attempts"`
	WindowFailures int64     `db:"window_failures"`
	Consecutive    int64     `db:"consecutive_failures"`
	LastSuccessAt  time.Time `db:"last_success_at"` // created_at if it never succeeded
}

// EndpointHealth returns the endpoint's counters and the sums of its buckets
// in the window ending at now (from the minute now-window falls in, and never
// before the endpoint was last re-enabled: of the minute it was re-enabled in,
// only what that minute's bucket gained since).
func (s *Store) EndpointHealth(ctx context.Context, id string, window time.Duration, now time.Time) (HealthCounts, error) {
	var h HealthCounts
	err := s.db.GetContext(ctx, &h, `SELECT p.state, p.consecutive_failures,
			COALESCE(p.last_success_at, p.created_at) AS last_success_at,
			COALESCE(SUM(GREATEST(b.attempts - CASE WHEN b.bucket_start = date_trunc('minute', p.counted_since)
				THEN p.counted_base_attempts ELSE 0 END, 0)), 0) AS window_attempts,
			COALESCE(SUM(GREATEST(b.failures - CASE WHEN b.bucket_start = date_trunc('minute', p.counted_since)
				THEN p.counted_base_failures ELSE 0 END, 0)), 0) AS window_failures
		FROM endpoints p
		LEFT JOIN endpoint_buckets b ON b.endpoint_id = p.id
			AND b.bucket_start >= date_trunc('minute', GREATEST($2::timestamptz - $3 * interval '1 microsecond',
				COALESCE(p.counted_since, '-infinity')))
		WHERE p.id = $1
		GROUP BY p.id`, id, now, window.Microseconds())
	if err != nil {
		return HealthCounts{}, notFound(err, "endpoint", id)
	}
	return h, nil
}

// ChangeState is one state change to record.
type ChangeState struct {
	EndpointID string
	From, To   string
	Reason     string
	At         time.Time
	// Restart starts the counters afresh: the sliding window from At on (what
	// the bucket of At's minute holds so far no longer counts), and
	// consecutive failures from zero (an endpoint re-enabled).
	Restart bool
}

// StateChanged is what ChangeEndpointState did.
type StateChanged struct {
	// Changed is false when the endpoint was no longer in the state the
	// change starts from (recorded before, or changed elsewhere).
	Changed bool
	// Raised is the hookrelay.endpoint.* event the change raised, if any.
	Raised Raised
}

// ChangeEndpointState sets the endpoint's state and records the change with
// its reason and its operational event, in one transaction, if the endpoint
// is still in c.From: recording the same change twice (an activity retried)
// records it once.
func (s *Store) ChangeEndpointState(ctx context.Context, c ChangeState) (StateChanged, error) {
	var out StateChanged
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE endpoints p SET state = $3, updated_at = now(),
				counted_since = CASE WHEN $4 THEN $5 ELSE counted_since END,
				counted_base_attempts = CASE WHEN $4 THEN COALESCE(b.attempts, 0) ELSE counted_base_attempts END,
				counted_base_failures = CASE WHEN $4 THEN COALESCE(b.failures, 0) ELSE counted_base_failures END,
				consecutive_failures = CASE WHEN $4 THEN 0 ELSE consecutive_failures END
			FROM (SELECT $1::text AS id) k
			LEFT JOIN endpoint_buckets b ON b.endpoint_id = k.id AND b.bucket_start = date_trunc('minute', $5::timestamptz)
			WHERE p.id = k.id AND p.state = $2`, c.EndpointID, c.From, c.To, c.Restart, c.At)
		if err != nil {
			return fmt.Errorf("store: change endpoint state: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		out.Changed = true
		_, err = tx.ExecContext(ctx, `INSERT INTO endpoint_state_changes
			(endpoint_id, from_state, to_state, reason, changed_at) VALUES ($1, $2, $3, $4, $5)`,
			c.EndpointID, c.From, c.To, c.Reason, c.At)
		if err != nil {
			return fmt.Errorf("store: record endpoint state change: %w", err)
		}
		out.Raised, err = raiseEndpointEvent(ctx, tx, c)
		return err
	})
	return out, err
}

// Waiting is a delivery parked while its endpoint is disabled or frozen.
type Waiting struct {
	ID         string    `db:"id"`
	WorkflowID string    `db:"workflow_id"`
	CreatedAt  time.Time `db:"created_at"`
}

// WaitingDeliveries lists up to limit of the endpoint's waiting deliveries,
// oldest first, after the one (created, id) given (zero for the start). The
// workflow of a batched delivery is its batch's, "batch/<batch id>", listed
// once per delivery of the batch (the rows keep their own unique
// workflow_id, which no workflow runs under).
func (s *Store) WaitingDeliveries(ctx context.Context, endpointID string, after Waiting, limit int) ([]Waiting, error) {
	ws := []Waiting{}
	err := s.db.SelectContext(ctx, &ws, `SELECT id, COALESCE('batch/' || batch_id, workflow_id) AS workflow_id,
			created_at FROM deliveries
		WHERE endpoint_id = $1 AND status = 'waiting' AND (created_at, id) > ($2, $3)
		ORDER BY created_at, id LIMIT $4`, endpointID, after.CreatedAt, after.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: waiting deliveries: %w", err)
	}
	return ws, nil
}

// EndpointSubscription returns the endpoint's oldest subscription, deleted or
// not: the one whose policy gives its rules to an endpoint made before its
// rules were stored with it (health.Service.Rules, once).
func (s *Store) EndpointSubscription(ctx context.Context, endpointID string) (Subscription, error) {
	var sub Subscription
	err := s.db.GetContext(ctx, &sub, `SELECT `+subscriptionCols+` FROM subscriptions
		WHERE endpoint_id = $1 ORDER BY created_at, id LIMIT 1`, endpointID)
	if err != nil {
		return Subscription{}, notFound(err, "subscription of endpoint", endpointID)
	}
	return sub, nil
}

// TakeEndpointRules stores rules as the endpoint's unless it has rules
// already, and returns the endpoint's rules: for an endpoint made before its
// rules were stored with it, taken once.
func (s *Store) TakeEndpointRules(ctx context.Context, id string, rules RawJSON) (RawJSON, error) {
	var out RawJSON
	err := s.db.GetContext(ctx, &out, `UPDATE endpoints SET rules = COALESCE(rules, $2)
		WHERE id = $1 RETURNING rules`, id, rules)
	if err != nil {
		return nil, notFound(err, "endpoint", id)
	}
	return out, nil
}

// SetEndpointHealth stores the endpoint's own health thresholds (a
// policies.HealthOverrides object).
func (s *Store) SetEndpointHealth(ctx context.Context, account, id string, health RawJSON) error {
	res, err := s.db.ExecContext(ctx, `UPDATE endpoints SET health = $3, updated_at = now()
		WHERE id = $1 AND account_id = $2`, id, account, health)
	if err != nil {
		return fmt.Errorf("store: set endpoint health: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("endpoint %q: %w", id, ErrNotFound)
	}
	return nil
}

// BucketRetention is how long endpoint buckets are kept: a day longer than the
// largest sliding window a health override may set (policies' window_seconds
// limit, 30 days).
const BucketRetention = 31 * 24 * time.Hour

// PruneBuckets deletes the endpoint buckets that started before before, and
// returns how many it deleted.
func (s *Store) PruneBuckets(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM endpoint_buckets WHERE bucket_start < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("store: prune buckets: %w", err)
	}
	return res.RowsAffected()
}
