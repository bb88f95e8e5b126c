-- +goose Up
-- SAP Open Connectors mode (docs/policies.md#sap).
--
-- Accounts authenticate with "Authorization: User <secret>, Organization
-- <secret>"; only SHA-256 hashes of the secrets are stored. The organization
-- secret's hash finds the account; both hashes are then compared in constant
-- time.
CREATE INDEX accounts_org_secret ON accounts (org_secret_hash) WHERE org_secret_hash <> '';

-- A queued delivery that PUT /notifications/subscriptions/deliveries has
-- delivered again becomes 'redelivered' and points at the fresh delivery, so
-- that it no longer appears as queued.
ALTER TABLE deliveries ADD COLUMN redelivery_id TEXT REFERENCES deliveries(id);

-- Add 'redelivered' to the status CHECK constraint. The constraint is rebuilt
-- from its current definition (rather than from a fixed list) so that statuses
-- other migrations added stay allowed.
-- +goose StatementBegin
DO $$
DECLARE def text;
BEGIN
    SELECT pg_get_constraintdef(c.oid) INTO def FROM pg_constraint c
    WHERE c.conrelid = 'deliveries'::regclass AND c.conname = 'deliveries_status_check';
    IF def IS NULL OR position('''queued''::text' IN def) = 0 THEN
        RAISE EXCEPTION 'deliveries_status_check not as expected: %', def;
    END IF;
    IF position('''redelivered''' IN def) = 0 THEN
        ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check;
        EXECUTE 'ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check '
            || replace(def, '''queued''::text', '''queued''::text, ''redelivered''::text');
    END IF;
END $$;
-- +goose StatementEnd

-- The pull query: an account's deliveries, oldest first.
CREATE INDEX deliveries_account_created ON deliveries (account_id, created_at, id);

-- +goose Down
UPDATE deliveries SET status = 'queued' WHERE status = 'redelivered';
-- +goose StatementBegin
DO $$
DECLARE def text;
BEGIN
    SELECT pg_get_constraintdef(c.oid) INTO def FROM pg_constraint c
    WHERE c.conrelid = 'deliveries'::regclass AND c.conname = 'deliveries_status_check';
    ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check;
    EXECUTE 'ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check '
        || replace(def, ', ''redelivered''::text', '');
END $$;
-- +goose StatementEnd
DROP INDEX deliveries_account_created;
ALTER TABLE deliveries DROP COLUMN redelivery_id;
DROP INDEX accounts_org_secret;
