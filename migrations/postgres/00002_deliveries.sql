-- Webhook deliveries perfbot serve has accepted, by GitHub's
-- X-GitHub-Delivery id, so that a replayed delivery starts nothing.

-- +goose Up
CREATE TABLE webhook_deliveries (
    id          text PRIMARY KEY CONSTRAINT webhook_deliveries_id_nonempty CHECK (id <> ''),
    received_at timestamptz NOT NULL
);
-- Old deliveries are pruned by age.
CREATE INDEX webhook_deliveries_received ON webhook_deliveries (received_at);

-- +goose Down
DROP TABLE webhook_deliveries;
