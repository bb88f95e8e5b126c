-- +goose Up
-- One retry in flight per delivery: follow-ups are looked up by previous_id.
CREATE INDEX deliveries_previous_id ON deliveries (previous_id) WHERE previous_id IS NOT NULL;

-- +goose Down
DROP INDEX deliveries_previous_id;
