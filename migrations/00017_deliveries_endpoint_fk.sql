-- +goose Up
-- Every attempt updates its endpoint's row (its health counters), and every
-- publication inserted deliveries whose foreign key share-locked that same
-- row: under load on one endpoint PostgreSQL then built a multixact for
-- nearly every change of the row, and publications and attempts queued
-- behind each other (issue 22: about 2.4 ms per publication and 4-10 ms per
-- attempt's completion, measured with pg_stat_statements). A delivery's
-- endpoint is always its subscription's, copied when it is stored, and
-- endpoints are never deleted, so the key guarded nothing the code does not.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_endpoint_id_fkey;

-- +goose Down
ALTER TABLE deliveries ADD CONSTRAINT deliveries_endpoint_id_fkey
    FOREIGN KEY (endpoint_id) REFERENCES endpoints(id);
