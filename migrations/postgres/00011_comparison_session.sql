-- The session that made each comparison (NULL for comparisons stored
-- before sessions were tied to them). A retried job whose earlier attempt
-- ended its session after storing a comparison publishes that comparison
-- instead of measuring again: the attempt was killed, or its completion
-- lost, after the measurement was done.

-- +goose Up
ALTER TABLE comparisons ADD COLUMN session_id bigint REFERENCES sessions (id);
CREATE INDEX comparisons_session ON comparisons (session_id);

-- +goose Down
DROP INDEX comparisons_session;
ALTER TABLE comparisons DROP COLUMN session_id;
