-- +goose Up
-- API keys (issue 10): each key acts as one account. Only the key's SHA-256
-- hash is stored; the key itself is shown once, when it is created. A
-- revoked key stays listed, with when it was revoked.
CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    name         TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

-- +goose Down
DROP TABLE api_keys;
