-- +goose Up
-- Every request hookrelay sends has its attempts row (issue 14): the row is
-- written before the request goes out, with error_kind 'in_flight', and
-- completed after. A row a crash left open is closed as 'unknown' when the
-- delivery's next execution begins or when the delivery ends. A delivery's
-- attempt number can then have several rows, one per execution: try counts
-- them.
ALTER TABLE attempts ADD COLUMN try INT NOT NULL DEFAULT 0;
ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_id_attempt_key;
ALTER TABLE attempts ADD CONSTRAINT attempts_delivery_attempt_try UNIQUE (delivery_id, attempt, try);
CREATE INDEX attempts_open ON attempts (delivery_id) WHERE error_kind = 'in_flight';

-- +goose Down
DROP INDEX attempts_open;
ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_attempt_try;
DELETE FROM attempts WHERE try > 0;
ALTER TABLE attempts ADD CONSTRAINT attempts_delivery_id_attempt_key UNIQUE (delivery_id, attempt);
ALTER TABLE attempts DROP COLUMN try;
