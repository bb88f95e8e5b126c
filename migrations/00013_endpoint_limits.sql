-- +goose Up
-- Receiver protection (issue 16): an endpoint may cap its concurrent
-- attempts and limit its attempts per period, across every worker. NULL is
-- no limit. endpoint_leases holds one row per attempt in progress (and, for
-- the rate limit, per attempt started within the period); a lease that a
-- crashed worker never released ends at expires_at.
ALTER TABLE endpoints
    ADD COLUMN max_concurrency INT CHECK (max_concurrency BETWEEN 1 AND 1000),
    ADD COLUMN rate_limit      INT CHECK (rate_limit BETWEEN 1 AND 100000),
    ADD COLUMN rate_limit_period_seconds INT NOT NULL DEFAULT 1 CHECK (rate_limit_period_seconds BETWEEN 1 AND 86400);

CREATE TABLE endpoint_leases (
    endpoint_id TEXT NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    holder      TEXT NOT NULL,
    started_at  TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    expires_at  TIMESTAMPTZ NOT NULL,
    released_at TIMESTAMPTZ,
    PRIMARY KEY (endpoint_id, holder)
);

-- +goose Down
DROP TABLE endpoint_leases;
ALTER TABLE endpoints DROP COLUMN max_concurrency, DROP COLUMN rate_limit, DROP COLUMN rate_limit_period_seconds;
