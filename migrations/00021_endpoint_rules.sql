-- +goose Up
-- An endpoint's circuit-breaker rules (docs/endpoints.md#endpoint-health-circuit-breaker):
-- taken once, when the endpoint is made, from the subscription that made it
-- (its policy's breaker with its retry_policy.health), as a policies.HealthDoc
-- JSON object. Only PUT /v1/endpoints/{id}/health changes the rules in force,
-- through the overrides in "health" applied over these. NULL: an endpoint
-- made before this column, whose rules are taken once, on their first read,
-- from its oldest subscription.
ALTER TABLE endpoints ADD COLUMN rules JSONB;

-- +goose Down
ALTER TABLE endpoints DROP COLUMN rules;
