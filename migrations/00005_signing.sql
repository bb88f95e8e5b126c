-- +goose Up
-- Every subscription gets a secret its deliveries are signed with (Standard
-- Webhooks: webhook-id, webhook-timestamp, webhook-signature). gen_random_uuid
-- is cryptographically random; two of them give 244 random bits.
ALTER TABLE subscriptions ADD COLUMN signing_secret TEXT NOT NULL
    DEFAULT ('whsec_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));

-- +goose Down
ALTER TABLE subscriptions DROP COLUMN signing_secret;
