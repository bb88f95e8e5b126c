-- +goose Up
-- Ordered delivery (issue 26, docs/ordering.md). A subscription may ask for
-- its events in publication order, per ordering key: one delivery in flight
-- per (subscription, ordering key) at a time.
ALTER TABLE subscriptions ADD COLUMN ordered BOOLEAN NOT NULL DEFAULT false;

-- The key an event was published with ('' or NULL: none).
ALTER TABLE events ADD COLUMN ordering_key TEXT;

-- A delivery to an ordered subscription carries its event's key and its
-- place in that key's sequence: a number from delivery_seq taken while the
-- publishing transaction holds the key's advisory lock, so that within a key
-- the numbers follow the order PostgreSQL committed the events in.
-- Deliveries to other subscriptions leave both NULL.
ALTER TABLE deliveries ADD COLUMN ordering_key TEXT, ADD COLUMN seq BIGINT;
CREATE SEQUENCE delivery_seq;

-- A sequence's deliveries still under way, in order: the next one to start,
-- the one blocking the rest, how many wait.
CREATE INDEX deliveries_sequence ON deliveries (subscription_id, ordering_key, seq)
    WHERE seq IS NOT NULL AND status IN ('pending', 'retrying', 'waiting');

-- +goose Down
DROP INDEX deliveries_sequence;
DROP SEQUENCE delivery_seq;
ALTER TABLE deliveries DROP COLUMN seq, DROP COLUMN ordering_key;
ALTER TABLE events DROP COLUMN ordering_key;
ALTER TABLE subscriptions DROP COLUMN ordered;
