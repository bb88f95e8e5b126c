-- +goose Up
-- Azure Event Grid and Event Grid on IoT Edge mode (docs/policies.md#eventgrid,
-- docs/policies.md#eventgrid-edge).

-- The schema fields of an event that hookrelay's own shape lacks: Event Grid's
-- topic and dataVersion, CloudEvents' source, datacontenttype and extension
-- attributes. '' and '{}' when the event did not carry them.
ALTER TABLE events ADD COLUMN data_version TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN data_content_type TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN extensions JSONB NOT NULL DEFAULT '{}';

-- PUT /eventgrid/subscriptions/{name} replaces by name and DELETE soft-deletes,
-- so a name must be unique among live subscriptions only: a deleted name can
-- be used again.
ALTER TABLE subscriptions DROP CONSTRAINT IF EXISTS subscriptions_account_id_name_key;
CREATE UNIQUE INDEX subscriptions_account_name_live ON subscriptions (account_id, name)
    WHERE deleted_at IS NULL;

-- Output batching (docs/policies.md#eventgrid-edge): a batch is the set of deliveries one
-- request carries; each delivery still gets its own attempt rows.
CREATE TABLE eventgrid_batches (
    id              TEXT PRIMARY KEY,
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    delivery_ids    TEXT[] NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
ALTER TABLE deliveries ADD COLUMN batch_id TEXT REFERENCES eventgrid_batches(id);

-- The pending deliveries of a subscription not yet claimed by a batch, oldest
-- first: what the batcher claims.
CREATE INDEX deliveries_subscription_unstarted ON deliveries (subscription_id, created_at, id)
    WHERE NOT started;

-- +goose Down
DROP INDEX deliveries_subscription_unstarted;
ALTER TABLE deliveries DROP COLUMN batch_id;
DROP TABLE eventgrid_batches;
DROP INDEX subscriptions_account_name_live;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_account_id_name_key UNIQUE (account_id, name);
ALTER TABLE events DROP COLUMN extensions;
ALTER TABLE events DROP COLUMN data_content_type;
ALTER TABLE events DROP COLUMN source;
ALTER TABLE events DROP COLUMN data_version;
