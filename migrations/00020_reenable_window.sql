-- +goose Up
-- Re-enable window (docs/endpoints.md#endpoint-health-circuit-breaker): an
-- endpoint enabled again counts its failure-rate window from that moment
-- (counted_since), but its buckets are per minute. counted_base_* are what
-- the bucket of counted_since's minute held when the endpoint was enabled
-- again: the window's sums leave them out, so that the attempts of that
-- minute before the re-enabling do not count.
ALTER TABLE endpoints
    ADD COLUMN counted_base_attempts BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN counted_base_failures BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE endpoints DROP COLUMN counted_base_attempts, DROP COLUMN counted_base_failures;
