-- Measuring sessions: one per comparison, baseline or bisection a perfbot
-- process ran (one job attempt in the bot), and the runs each stored. A
-- session is 'running' until its process ends it ('ended'); a process
-- killed mid-session (SIGKILL, a crash, the host going down) leaves it
-- 'running' until a later session on the same host sees that its owner
-- process is gone and marks it 'abandoned'. Bisections reuse and History
-- reads only the runs of ended sessions (and runs stored before this
-- table existed, whose session_id is NULL): the runs of a killed attempt
-- are each whole, but their set is not, and the job's retry measures
-- again.
--
-- owner is 'MACHINE-ID/BOOT-ID/PID/START' of the process (its start time
-- in clock ticks since boot, so a reused pid is not taken for it), or ''
-- where the host says none of it (never judged dead).

-- +goose Up
CREATE TABLE sessions (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id    bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    kind       text NOT NULL CONSTRAINT sessions_kind_known
               CHECK (kind IN ('baseline', 'compare', 'calibrate', 'bisect')),
    owner      text NOT NULL DEFAULT '',
    label      text NOT NULL DEFAULT '', -- what ran it: a job and its attempt, or the command
    started_at timestamptz NOT NULL,
    ended_at   timestamptz,
    state      text NOT NULL DEFAULT 'running' CONSTRAINT sessions_state_known
               CHECK (state IN ('running', 'ended', 'abandoned'))
);
-- The sweep finds the sessions still running.
CREATE INDEX sessions_running ON sessions (state, owner);

ALTER TABLE runs ADD COLUMN session_id bigint REFERENCES sessions (id);

-- +goose Down
ALTER TABLE runs DROP COLUMN session_id;
DROP TABLE sessions;
