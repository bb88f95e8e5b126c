-- +goose Up
-- The sweeper's backoff for deliveries whose workflow failed to start: each
-- failure counts and puts the next try off, so rows that cannot start do not
-- keep newer unstarted deliveries from being swept.
ALTER TABLE deliveries ADD COLUMN start_attempts INT NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN next_start_at TIMESTAMPTZ;

-- The pending deliveries claimed by a batch: where the sweeper looks for
-- batches whose Batch workflow was never started.
CREATE INDEX deliveries_batch_pending ON deliveries (batch_id)
    WHERE batch_id IS NOT NULL AND status = 'pending';

-- +goose Down
DROP INDEX deliveries_batch_pending;
ALTER TABLE deliveries DROP COLUMN next_start_at;
ALTER TABLE deliveries DROP COLUMN start_attempts;
