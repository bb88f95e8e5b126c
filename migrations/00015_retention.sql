-- +goose Up
-- Retention (issue 16): the worker deletes what finished longer ago than
-- HOOKRELAY_RETENTION, and dead letters older than
-- HOOKRELAY_DEAD_LETTER_RETENTION, a few hundred rows per statement
-- (store.Prune). These indexes let each run walk the old rows once, oldest
-- first, instead of scanning the tables.
--
-- Finished deliveries by when they finished (finished_at is set once, with
-- the final status, so the index costs no extra update).
CREATE INDEX deliveries_finished ON deliveries (finished_at, id) WHERE finished_at IS NOT NULL;
-- Events by age.
CREATE INDEX events_created ON events (created_at, id);
-- Whether an event or a delivery's group still has a dead letter.
CREATE INDEX dead_letters_event ON dead_letters (event_id);

-- +goose Down
DROP INDEX dead_letters_event;
DROP INDEX events_created;
DROP INDEX deliveries_finished;
