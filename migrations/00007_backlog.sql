-- +goose Up
-- The deliveries still waiting for the outcome of their first attempt, oldest
-- first: the worker reads the backlog's size and lag from here every few
-- seconds (store.TotalBacklog).
CREATE INDEX deliveries_pending ON deliveries (created_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX deliveries_pending;
