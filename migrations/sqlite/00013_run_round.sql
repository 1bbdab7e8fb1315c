-- The round of its session a run ran in (runner: in each round every side
-- runs each benchmark once, in random order), from 1, so that the runs
-- measured beside each other (in one round of one session) can be found
-- again and paired later. 0 where it is not known: every run stored
-- before this column existed, and a run no round made (a failed build's).

-- +goose Up
ALTER TABLE runs ADD COLUMN round INTEGER NOT NULL DEFAULT 0
    CONSTRAINT runs_round_nonnegative CHECK (round >= 0);

-- +goose Down
ALTER TABLE runs DROP COLUMN round;
