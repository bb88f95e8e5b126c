package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Limits protect an endpoint's receiver (issue 16): at most MaxConcurrency
// attempts in progress, and at most RateLimit attempts started in any
// RateLimitPeriodSeconds, across every worker. Nil is no limit.
type Limits struct {
	MaxConcurrency         *int `db:"max_concurrency" json:"max_concurrency"`
	RateLimit              *int `db:"rate_limit" json:"rate_limit"`
	RateLimitPeriodSeconds int  `db:"rate_limit_period_seconds" json:"rate_limit_period_seconds"`
}

const limitCols = `p.max_concurrency, p.rate_limit, p.rate_limit_period_seconds`

// Limited reports whether l limits anything.
func (l Limits) Limited() bool { return l.MaxConcurrency != nil || l.RateLimit != nil }

// unlimitedSQL is Limited's negation for the endpoint p in a query.
const unlimitedSQL = `p.max_concurrency IS NULL AND p.rate_limit IS NULL`

// SetLimits replaces the limits of the account's endpoint id. The database
// checks their bounds (migration 00013); the API checks them first.
func (s *Store) SetLimits(ctx context.Context, account, id string, l Limits) (Endpoint, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE endpoints SET max_concurrency = $3, rate_limit = $4,
		rate_limit_period_seconds = $5, updated_at = now() WHERE id = $1 AND account_id = $2`,
		id, account, l.MaxConcurrency, l.RateLimit, l.RateLimitPeriodSeconds)
	if err != nil {
		return Endpoint{}, fmt.Errorf("store: set endpoint limits: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Endpoint{}, fmt.Errorf("endpoint %s: %w", id, ErrNotFound)
	}
	return s.GetEndpoint(ctx, account, id)
}

// leaseUse is what an endpoint's leases hold now, holder's own left out.
type leaseUse struct {
	InProgress int        `db:"in_progress"`
	InPeriod   int        `db:"in_period"`
	Oldest     *time.Time `db:"oldest"`
	Now        time.Time  `db:"now"`
}

// Acquire takes a slot for holder (one attempt) at the endpoint under its
// current limits, held at most ttl unless released. When there is no room
// it reports ok false and, when the rate limit is what holds it back, how
// long until there is (zero when unknown). The endpoint's row lock
// serialises the workers deciding for the same endpoint.
func (s *Store) Acquire(ctx context.Context, endpointID, holder string, ttl time.Duration) (wait time.Duration, ok bool, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		var l Limits
		if err := tx.GetContext(ctx, &l, `SELECT max_concurrency, rate_limit, rate_limit_period_seconds
			FROM endpoints p WHERE id = $1 FOR UPDATE`, endpointID); err != nil {
			return notFound(err, "endpoint", endpointID)
		}
		u, err := leaseUseOf(ctx, tx, endpointID, holder, l.RateLimitPeriodSeconds)
		if err != nil {
			return err
		}
		if wait, ok = l.admit(u); !ok {
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO endpoint_leases (endpoint_id, holder, expires_at)
			VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))
			ON CONFLICT (endpoint_id, holder) DO UPDATE SET started_at = clock_timestamp(),
				expires_at = EXCLUDED.expires_at, released_at = NULL`, endpointID, holder, ttl.Seconds())
		if err != nil {
			return fmt.Errorf("store: take endpoint lease: %w", err)
		}
		return nil
	})
	return wait, ok, err
}

// leaseUseOf forgets the endpoint's leases that neither hold a slot nor
// count in the rate period any more, and counts the others.
func leaseUseOf(ctx context.Context, tx *sqlx.Tx, endpointID, holder string, period int) (leaseUse, error) {
	if _, err := tx.ExecContext(ctx, `DELETE FROM endpoint_leases WHERE endpoint_id = $1
		AND (released_at IS NOT NULL OR expires_at < clock_timestamp())
		AND started_at < clock_timestamp() - make_interval(secs => $2)`, endpointID, period); err != nil {
		return leaseUse{}, fmt.Errorf("store: forget endpoint leases: %w", err)
	}
	var u leaseUse
	err := tx.GetContext(ctx, &u, `SELECT
			count(*) FILTER (WHERE released_at IS NULL AND expires_at > now) AS in_progress,
			count(*) FILTER (WHERE started_at > now - make_interval(secs => $3)) AS in_period,
			min(started_at) FILTER (WHERE started_at > now - make_interval(secs => $3)) AS oldest,
			now
		FROM (SELECT clock_timestamp() AS now) n
		LEFT JOIN endpoint_leases ON endpoint_id = $1 AND holder <> $2
		GROUP BY now`, endpointID, holder, period)
	if err != nil {
		return leaseUse{}, fmt.Errorf("store: count endpoint leases: %w", err)
	}
	return u, nil
}

// admit decides whether one more attempt fits l, given u; when the rate
// limit is full, wait is until its oldest attempt leaves the period.
func (l Limits) admit(u leaseUse) (wait time.Duration, ok bool) {
	if l.MaxConcurrency != nil && u.InProgress >= *l.MaxConcurrency {
		return 0, false
	}
	if l.RateLimit != nil && u.InPeriod >= *l.RateLimit {
		if u.Oldest == nil {
			return 0, false
		}
		return max(u.Oldest.Add(time.Duration(l.RateLimitPeriodSeconds)*time.Second).Sub(u.Now), 0), false
	}
	return 0, true
}

// Release gives holder's slot at the endpoint back; the lease still counts
// in the rate period it started in.
func (s *Store) Release(ctx context.Context, endpointID, holder string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE endpoint_leases SET released_at = clock_timestamp()
		WHERE endpoint_id = $1 AND holder = $2`, endpointID, holder)
	if err != nil {
		return fmt.Errorf("store: release endpoint lease: %w", err)
	}
	return nil
}
