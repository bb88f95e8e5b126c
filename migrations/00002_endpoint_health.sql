-- +goose Up
-- Endpoint health (docs/policies.md#workfront-circuit-breaker).
--
-- counted_since: when an endpoint is (re-)enabled its sliding window starts
-- afresh, so that the failures that disabled it do not disable it again at the
-- first failure after a successful probe. NULL means "since the beginning".
ALTER TABLE endpoints ADD COLUMN counted_since TIMESTAMPTZ;

-- Per-endpoint health thresholds (a policies.HealthOverrides JSON object) that
-- take precedence over the policy's own; '{}' keeps the policy's.
ALTER TABLE endpoints ADD COLUMN health JSONB NOT NULL DEFAULT '{}';

-- The waiting deliveries of an endpoint, oldest first: the probe takes the
-- first, re-enabling releases them all.
CREATE INDEX deliveries_endpoint_waiting ON deliveries (endpoint_id, created_at, id)
    WHERE status = 'waiting';

-- +goose Down
DROP INDEX deliveries_endpoint_waiting;
ALTER TABLE endpoints DROP COLUMN health;
ALTER TABLE endpoints DROP COLUMN counted_since;
