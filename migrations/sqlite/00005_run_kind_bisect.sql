-- Runs of kind 'bisect': the commits a bisection measured (perfbot
-- bisect, /perfbot bisect). History and Trend read baseline runs only,
-- so these stay out of noise floors and trends; a later bisection reuses
-- them (it reuses runs of every kind, of the same config and machine).
--
-- SQLite cannot change a CHECK constraint in place, so the runs table is
-- rebuilt the way SQLite's documentation of ALTER TABLE says ("making
-- other kinds of table schema changes"): foreign keys off, a new table,
-- every row copied with its id, the old table dropped (with foreign keys
-- off, samples and profiles are not deleted with it), the new one renamed
-- and its indexes made again. PRAGMA foreign_keys does nothing inside a
-- transaction, so goose runs this file outside one (on one connection)
-- and the rebuild is a transaction of its own. AUTOINCREMENT's counter is
-- carried over, so no run id is ever reused.

-- +goose NO TRANSACTION

-- +goose Up
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
CREATE TABLE runs_new (
    -- AUTOINCREMENT: an id is never reused, so links to runs stay valid
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id     INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    commit_sha  TEXT NOT NULL,
    kind        TEXT NOT NULL CONSTRAINT runs_kind_known
                CHECK (kind IN ('baseline', 'compare', 'calibrate', 'bisect')),
    config_hash TEXT NOT NULL DEFAULT '',
    config      TEXT CONSTRAINT runs_config_json CHECK (json_valid(config)), -- the benchmark configuration
    machine     TEXT NOT NULL DEFAULT '', -- short machine id
    env         TEXT CONSTRAINT runs_env_json CHECK (json_valid(env)), -- the machine fingerprint
    started_at  TEXT NOT NULL CONSTRAINT runs_started_at_utc
                CHECK (started_at LIKE '____-__-__T__:__:__.______Z'),
    ended_at    TEXT CONSTRAINT runs_ended_at_utc
                CHECK (ended_at LIKE '____-__-__T__:__:__.______Z'),
    status      TEXT NOT NULL CONSTRAINT runs_status_known
                CHECK (status IN ('ok', 'build-failed', 'crashed', 'timed-out', 'no-output')),
    detail      TEXT NOT NULL DEFAULT '', -- why it failed: exit status, stderr tail
    -- the tool it ran under: '' timed, 'callgrind' simulated (00004)
    tool        TEXT NOT NULL DEFAULT '' CONSTRAINT runs_tool_known CHECK (tool IN ('', 'callgrind')),
    FOREIGN KEY (repo_id, commit_sha) REFERENCES commits (repo_id, sha) ON DELETE CASCADE
) STRICT;
INSERT INTO runs_new (id, repo_id, commit_sha, kind, config_hash, config, machine, env,
                      started_at, ended_at, status, detail, tool)
    SELECT id, repo_id, commit_sha, kind, config_hash, config, machine, env,
           started_at, ended_at, status, detail, tool
    FROM runs;
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'runs_new', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'runs_new');
UPDATE sqlite_sequence
    SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'runs'), 0))
    WHERE name = 'runs_new';
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
-- History and Trend: baseline runs of a repository in time order.
CREATE INDEX runs_repo_kind_time ON runs (repo_id, kind, started_at);
-- Runs of given commits (a comparison's base and head, bisect's probes).
CREATE INDEX runs_repo_commit ON runs (repo_id, commit_sha);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
DELETE FROM runs WHERE kind = 'bisect';
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
CREATE TABLE runs_old (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id     INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    commit_sha  TEXT NOT NULL,
    kind        TEXT NOT NULL CONSTRAINT runs_kind_known
                CHECK (kind IN ('baseline', 'compare', 'calibrate')),
    config_hash TEXT NOT NULL DEFAULT '',
    config      TEXT CONSTRAINT runs_config_json CHECK (json_valid(config)),
    machine     TEXT NOT NULL DEFAULT '',
    env         TEXT CONSTRAINT runs_env_json CHECK (json_valid(env)),
    started_at  TEXT NOT NULL CONSTRAINT runs_started_at_utc
                CHECK (started_at LIKE '____-__-__T__:__:__.______Z'),
    ended_at    TEXT CONSTRAINT runs_ended_at_utc
                CHECK (ended_at LIKE '____-__-__T__:__:__.______Z'),
    status      TEXT NOT NULL CONSTRAINT runs_status_known
                CHECK (status IN ('ok', 'build-failed', 'crashed', 'timed-out', 'no-output')),
    detail      TEXT NOT NULL DEFAULT '',
    tool        TEXT NOT NULL DEFAULT '' CONSTRAINT runs_tool_known CHECK (tool IN ('', 'callgrind')),
    FOREIGN KEY (repo_id, commit_sha) REFERENCES commits (repo_id, sha) ON DELETE CASCADE
) STRICT;
INSERT INTO runs_old (id, repo_id, commit_sha, kind, config_hash, config, machine, env,
                      started_at, ended_at, status, detail, tool)
    SELECT id, repo_id, commit_sha, kind, config_hash, config, machine, env,
           started_at, ended_at, status, detail, tool
    FROM runs;
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'runs_old', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'runs_old');
UPDATE sqlite_sequence
    SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'runs'), 0))
    WHERE name = 'runs_old';
DROP TABLE runs;
ALTER TABLE runs_old RENAME TO runs;
CREATE INDEX runs_repo_kind_time ON runs (repo_id, kind, started_at);
CREATE INDEX runs_repo_commit ON runs (repo_id, commit_sha);
COMMIT;
PRAGMA foreign_keys = ON;
