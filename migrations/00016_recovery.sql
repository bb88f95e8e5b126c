-- +goose Up
-- GET /v1/events lists an account's events a page at a time, oldest first.
CREATE INDEX events_account_created ON events (account_id, created_at, id);

-- Recovery (POST /v1/endpoints/{id}/recover, /v1/subscriptions/{id}/recover)
-- finds an endpoint's or a subscription's dead-lettered and dropped
-- deliveries by when they ended. Whether one was recovered is not a column:
-- it is recovered once it has a follow-up (deliveries.previous_id, indexed
-- by deliveries_previous_id), whether a recovery, a redrive or a retry made it.
CREATE INDEX deliveries_endpoint_ended ON deliveries (endpoint_id, finished_at)
    WHERE status IN ('dead_lettered', 'dropped');
CREATE INDEX deliveries_subscription_ended ON deliveries (subscription_id, finished_at)
    WHERE status IN ('dead_lettered', 'dropped');

-- +goose Down
DROP INDEX deliveries_subscription_ended;
DROP INDEX deliveries_endpoint_ended;
DROP INDEX events_account_created;
