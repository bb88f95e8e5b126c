-- +goose Up
-- Stored secrets are encrypted (issue 55, docs/security.md#secrets-at-rest):
-- signing_secret and previous_signing_secret hold AES-256-GCM ciphertexts
-- sealed for their row's id, and these columns the id of the key that
-- sealed each. An empty key id marks plain text from before, which
-- hookrelay encrypts at start (store.Reseal). The secret is made in Go now,
-- so the column loses the default that made it in plain text.
ALTER TABLE subscriptions
    ALTER COLUMN signing_secret DROP DEFAULT,
    ADD COLUMN signing_secret_key TEXT NOT NULL DEFAULT '',
    ADD COLUMN previous_signing_secret_key TEXT NOT NULL DEFAULT '';

-- +goose Down
-- Only once `hookrelay secrets decrypt` wrote every secret back in plain text
-- (docs/security.md#downgrading): an older hookrelay cannot read ciphertexts.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM subscriptions WHERE signing_secret_key <> '' OR previous_signing_secret_key <> '') THEN
        RAISE EXCEPTION 'encrypted secrets remain: run hookrelay secrets decrypt first';
    END IF;
END $$;
-- +goose StatementEnd
ALTER TABLE subscriptions DROP COLUMN signing_secret_key, DROP COLUMN previous_signing_secret_key,
    ALTER COLUMN signing_secret
        SET DEFAULT ('whsec_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
