-- +goose Up
-- Accounts are tenants (docs/policies.md#sap). The /v1 API without credentials acts
-- as the default account.
CREATE TABLE accounts (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    mode             TEXT NOT NULL DEFAULT 'retry' CHECK (mode IN ('retry', 'queue')),
    org_secret_hash  TEXT NOT NULL DEFAULT '',
    user_secret_hash TEXT NOT NULL DEFAULT '',
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO accounts (id, name) VALUES ('acct_default', 'default');

-- An endpoint is one distinct URL within an account: the unit of health.
CREATE TABLE endpoints (
    id                   TEXT PRIMARY KEY,
    account_id           TEXT NOT NULL REFERENCES accounts(id),
    url                  TEXT NOT NULL,
    state                TEXT NOT NULL DEFAULT 'enabled' CHECK (state IN ('enabled', 'disabled', 'frozen')),
    attempts             BIGINT NOT NULL DEFAULT 0,
    failures             BIGINT NOT NULL DEFAULT 0,
    consecutive_failures BIGINT NOT NULL DEFAULT 0,
    last_success_at      TIMESTAMPTZ,
    last_failure_at      TIMESTAMPTZ,
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (account_id, url)
);

-- Per-minute attempt counts of an endpoint, summed for the sliding window.
CREATE TABLE endpoint_buckets (
    endpoint_id  TEXT NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    bucket_start TIMESTAMPTZ NOT NULL,
    attempts     BIGINT NOT NULL DEFAULT 0,
    failures     BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (endpoint_id, bucket_start)
);

-- Every change of an endpoint's state, with its reason.
CREATE TABLE endpoint_state_changes (
    id          BIGSERIAL PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    from_state  TEXT NOT NULL,
    to_state    TEXT NOT NULL,
    reason      TEXT NOT NULL,
    changed_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX endpoint_state_changes_endpoint ON endpoint_state_changes (endpoint_id, id);

CREATE TABLE subscriptions (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    endpoint_id  TEXT NOT NULL REFERENCES endpoints(id),
    name         TEXT,
    url          TEXT NOT NULL,
    event_types  TEXT[] NOT NULL DEFAULT '{}',
    policy       TEXT NOT NULL,
    retry_policy JSONB NOT NULL DEFAULT '{}',
    active       BOOLEAN NOT NULL DEFAULT true,
    options      JSONB NOT NULL DEFAULT '{}',
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    deleted_at   TIMESTAMPTZ,
    UNIQUE (account_id, name)
);
CREATE INDEX subscriptions_account ON subscriptions (account_id) WHERE deleted_at IS NULL;

-- Events keep their bodies here; workflows carry only ids.
CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    external_id TEXT NOT NULL,
    type        TEXT NOT NULL,
    subject     TEXT NOT NULL DEFAULT '',
    data        JSONB NOT NULL DEFAULT 'null',
    occurred_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (account_id, external_id)
);

-- One delivery per (event, subscription), plus one per redrive or retry.
CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    event_id        TEXT NOT NULL REFERENCES events(id),
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    endpoint_id     TEXT NOT NULL REFERENCES endpoints(id),
    event_type      TEXT NOT NULL,
    policy          TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
                    ('pending', 'retrying', 'waiting', 'delivered', 'dead_lettered', 'dropped', 'queued')),
    attempts        INT NOT NULL DEFAULT 0,
    workflow_id     TEXT NOT NULL UNIQUE,
    started         BOOLEAN NOT NULL DEFAULT false,
    previous_id     TEXT REFERENCES deliveries(id),
    next_attempt_at TIMESTAMPTZ,
    final_reason    TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at     TIMESTAMPTZ
);
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_unstarted ON deliveries (created_at) WHERE NOT started;
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status);
CREATE INDEX deliveries_account_status ON deliveries (account_id, status, created_at);

-- Every attempt: one row per activity execution that made an HTTP request.
CREATE TABLE attempts (
    id               BIGSERIAL PRIMARY KEY,
    delivery_id      TEXT NOT NULL REFERENCES deliveries(id),
    attempt          INT NOT NULL,
    scheduled_at     TIMESTAMPTZ NOT NULL,
    started_at       TIMESTAMPTZ NOT NULL,
    duration_ms      DOUBLE PRECISION NOT NULL,
    status_code      INT NOT NULL DEFAULT 0,
    error_kind       TEXT NOT NULL DEFAULT '',
    error_message    TEXT NOT NULL DEFAULT '',
    response_body    TEXT NOT NULL DEFAULT '',
    response_headers JSONB NOT NULL DEFAULT '{}',
    success          BOOLEAN NOT NULL,
    UNIQUE (delivery_id, attempt)
);

CREATE TABLE dead_letters (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL REFERENCES accounts(id),
    delivery_id         TEXT NOT NULL UNIQUE REFERENCES deliveries(id),
    event_id            TEXT NOT NULL REFERENCES events(id),
    subscription_id     TEXT NOT NULL REFERENCES subscriptions(id),
    endpoint_id         TEXT NOT NULL REFERENCES endpoints(id),
    reason              TEXT NOT NULL,
    last_status_code    INT NOT NULL DEFAULT 0,
    last_error          TEXT NOT NULL DEFAULT '',
    attempts            INT NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    redriven_at         TIMESTAMPTZ,
    redrive_delivery_id TEXT REFERENCES deliveries(id)
);
CREATE INDEX dead_letters_list ON dead_letters (account_id, created_at, id);

-- +goose Down
DROP TABLE dead_letters;
DROP TABLE attempts;
DROP TABLE deliveries;
DROP TABLE events;
DROP TABLE subscriptions;
DROP TABLE endpoint_state_changes;
DROP TABLE endpoint_buckets;
DROP TABLE endpoints;
DROP TABLE accounts;
