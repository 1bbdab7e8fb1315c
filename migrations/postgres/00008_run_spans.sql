-- The spans a run's program printed (span lines: when each phase of each
-- proof ran, its lane, what a wait waited for), as JSON: an array of
-- analysis.Span, or NULL for a run that printed none (every run stored
-- before this column existed). Analysis builds the critical path of
-- overlapped phases from them; they are read with the run, never queried
-- on their own, so one value per run is the whole need.

-- +goose Up
ALTER TABLE runs ADD COLUMN spans text;

-- +goose Down
ALTER TABLE runs DROP COLUMN spans;
