-- +goose Up
-- Signing secret rotation and Ed25519 signatures (issue 16). A subscription
-- signs with HMAC-SHA256 (Standard Webhooks "v1", a whsec_ secret) or
-- Ed25519 ("v1a", a whsk_ secret key whose whpk_ public key is readable).
-- A rotation keeps the replaced secret in previous_signing_secret until
-- previous_secret_expires_at: until then every delivery carries both
-- signatures.
ALTER TABLE subscriptions
    ADD COLUMN signature_scheme TEXT NOT NULL DEFAULT 'hmac-sha256'
        CHECK (signature_scheme IN ('hmac-sha256', 'ed25519')),
    ADD COLUMN signing_public_key TEXT NOT NULL DEFAULT '',
    ADD COLUMN previous_signing_secret TEXT NOT NULL DEFAULT '',
    ADD COLUMN previous_secret_expires_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE subscriptions DROP COLUMN signature_scheme, DROP COLUMN signing_public_key,
    DROP COLUMN previous_signing_secret, DROP COLUMN previous_secret_expires_at;
