-- Runs of kind 'bisect': the commits a bisection measured (perfbot
-- bisect, /perfbot bisect). History and Trend read baseline runs only,
-- so these stay out of noise floors and trends; a later bisection reuses
-- them (it reuses runs of every kind, of the same config and machine).

-- +goose Up
ALTER TABLE runs DROP CONSTRAINT runs_kind_known;
ALTER TABLE runs ADD CONSTRAINT runs_kind_known
    CHECK (kind IN ('baseline', 'compare', 'calibrate', 'bisect'));

-- +goose Down
DELETE FROM runs WHERE kind = 'bisect';
ALTER TABLE runs DROP CONSTRAINT runs_kind_known;
ALTER TABLE runs ADD CONSTRAINT runs_kind_known
    CHECK (kind IN ('baseline', 'compare', 'calibrate'));
