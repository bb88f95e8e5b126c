-- +goose Up
-- Room on each page for a row's next version (issue 22, BENCHMARKS.md). An
-- update that changes no indexed column can then stay on its page (a HOT
-- update) and touch none of the table's indexes: the attempt count every
-- attempt writes on its delivery, and the counters every outcome writes on
-- its endpoint and its minute bucket. Pages written from now on keep it.
ALTER TABLE deliveries SET (fillfactor = 85);
ALTER TABLE endpoints SET (fillfactor = 50);
ALTER TABLE endpoint_buckets SET (fillfactor = 70);

-- +goose Down
ALTER TABLE endpoint_buckets RESET (fillfactor);
ALTER TABLE endpoints RESET (fillfactor);
ALTER TABLE deliveries RESET (fillfactor);
