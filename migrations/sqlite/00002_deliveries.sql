-- Webhook deliveries perfbot serve has accepted, by GitHub's
-- X-GitHub-Delivery id, so that a replayed delivery starts nothing.

-- +goose Up
CREATE TABLE webhook_deliveries (
    id          text PRIMARY KEY CONSTRAINT webhook_deliveries_id_nonempty CHECK (id <> ''),
    received_at text NOT NULL -- UTC, fixed-width RFC 3339 with microseconds
) STRICT;
CREATE INDEX webhook_deliveries_received ON webhook_deliveries (received_at);

-- +goose Down
DROP TABLE webhook_deliveries;
