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
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id    INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CONSTRAINT sessions_kind_known
               CHECK (kind IN ('baseline', 'compare', 'calibrate', 'bisect')),
    owner      TEXT NOT NULL DEFAULT '',
    label      TEXT NOT NULL DEFAULT '', -- what ran it: a job and its attempt, or the command
    started_at TEXT NOT NULL CONSTRAINT sessions_started_at_utc
               CHECK (started_at LIKE '____-__-__T__:__:__.______Z'),
    ended_at   TEXT CONSTRAINT sessions_ended_at_utc
               CHECK (ended_at LIKE '____-__-__T__:__:__.______Z'),
    state      TEXT NOT NULL DEFAULT 'running' CONSTRAINT sessions_state_known
               CHECK (state IN ('running', 'ended', 'abandoned'))
) STRICT;
-- The sweep finds the sessions still running.
CREATE INDEX sessions_running ON sessions (state, owner);

-- No REFERENCES here (PostgreSQL has one): SQLite cannot drop a column
-- that is in a foreign key, which the Down migration must. SaveRun
-- stores only ids BeginSession returned, and deleting a repository
-- deletes its runs with its sessions.
ALTER TABLE runs ADD COLUMN session_id INTEGER;

-- +goose Down
ALTER TABLE runs DROP COLUMN session_id;
DROP TABLE sessions;
