-- The first schema: repositories, commits, runs with their samples, and
-- comparisons. Tables are STRICT. Timestamps are TEXT in UTC, fixed-width
-- RFC 3339 with microseconds (2006-01-02T15:04:05.000000Z), so text order
-- is time order. JSON columns are TEXT checked by json_valid.

-- +goose Up
CREATE TABLE repos (
    id   INTEGER PRIMARY KEY,
    -- a path, a URL or owner/name, as the user named it
    name TEXT NOT NULL UNIQUE CONSTRAINT repos_name_nonempty CHECK (name <> '')
) STRICT;

CREATE TABLE commits (
    repo_id     INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    sha         TEXT NOT NULL CONSTRAINT commits_sha_nonempty CHECK (sha <> ''),
    parents     TEXT NOT NULL DEFAULT '', -- space-separated SHAs
    author_time TEXT CONSTRAINT commits_author_time_utc
                CHECK (author_time LIKE '____-__-__T__:__:__.______Z'),
    subject     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (repo_id, sha)
) STRICT;

CREATE TABLE runs (
    -- AUTOINCREMENT: an id is never reused, so links to runs stay valid
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id     INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    commit_sha  TEXT NOT NULL,
    kind        TEXT NOT NULL CONSTRAINT runs_kind_known
                CHECK (kind IN ('baseline', 'compare', 'calibrate')),
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
    FOREIGN KEY (repo_id, commit_sha) REFERENCES commits (repo_id, sha) ON DELETE CASCADE
) STRICT;

-- History and Trend: baseline runs of a repository in time order.
CREATE INDEX runs_repo_kind_time ON runs (repo_id, kind, started_at);
-- Runs of given commits (a comparison's base and head).
CREATE INDEX runs_repo_commit ON runs (repo_id, commit_sha);

CREATE TABLE samples (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL, -- position in the run's sample list
    benchmark TEXT NOT NULL CONSTRAINT samples_benchmark_nonempty CHECK (benchmark <> ''),
    phase     TEXT NOT NULL,
    unit      TEXT NOT NULL CONSTRAINT samples_unit_nonempty CHECK (unit <> ''),
    -- SQLite stores a NaN as NULL, which NOT NULL refuses; 9e999 is +Inf
    value     REAL NOT NULL CONSTRAINT samples_value_finite CHECK (value > -9e999 AND value < 9e999),
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

-- No index by (benchmark, phase, unit): History and Trend find their runs
-- through runs_repo_kind_time and read each run's samples through the
-- primary key. Such an index made every saved run dirty about one index
-- page per key (5x slower saves on a database of 1,000 runs) and led the
-- PostgreSQL planner astray before the first ANALYZE.

CREATE TABLE comparisons (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id    INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    base_sha   TEXT NOT NULL,
    head_sha   TEXT NOT NULL,
    created_at TEXT NOT NULL CONSTRAINT comparisons_created_at_utc
               CHECK (created_at LIKE '____-__-__T__:__:__.______Z'),
    verdict    TEXT NOT NULL DEFAULT '',
    inputs     TEXT CONSTRAINT comparisons_inputs_json CHECK (json_valid(inputs)), -- what was compared
    report     TEXT CONSTRAINT comparisons_report_json CHECK (json_valid(report)), -- analysis's report
    markdown   TEXT NOT NULL DEFAULT '' -- the rendered comment
) STRICT;

CREATE INDEX comparisons_repo_head ON comparisons (repo_id, head_sha, created_at);

-- +goose Down
DROP TABLE comparisons;
DROP TABLE samples;
DROP TABLE runs;
DROP TABLE commits;
DROP TABLE repos;
