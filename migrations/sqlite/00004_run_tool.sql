-- The tool a run ran under: '' for a timed run, 'callgrind' for the run
-- a benchmark with callgrind set makes under valgrind's callgrind after
-- its timed runs, whose samples are simulated instruction counts. Runs
-- stored before this column existed were all timed.

-- +goose Up
ALTER TABLE runs ADD COLUMN tool TEXT NOT NULL DEFAULT ''
    CONSTRAINT runs_tool_known CHECK (tool IN ('', 'callgrind'));

-- +goose Down
ALTER TABLE runs DROP COLUMN tool;
