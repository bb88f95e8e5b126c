-- +goose Up
-- The web console's signing key (issue 23): it signs the console's session
-- cookies and the portal links POST /v1/portal-sessions makes, so that every
-- API process accepts what any other signed. One row, made on first use.
CREATE TABLE console_keys (
    id         SMALLINT PRIMARY KEY CHECK (id = 1),
    secret     BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE console_keys;
