-- The first schema: repositories, commits, runs with their samples, and
-- comparisons. Timestamps are timestamptz (UTC on the Go side, microsecond
-- precision); JSON columns are json, which keeps the text as written.

-- +goose Up
CREATE TABLE repos (
    id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- a path, a URL or owner/name, as the user named it
    name text NOT NULL UNIQUE CONSTRAINT repos_name_nonempty CHECK (name <> '')
);

CREATE TABLE commits (
    repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    sha         text NOT NULL CONSTRAINT commits_sha_nonempty CHECK (sha <> ''),
    parents     text NOT NULL DEFAULT '', -- space-separated SHAs
    author_time timestamptz,
    subject     text NOT NULL DEFAULT '',
    PRIMARY KEY (repo_id, sha)
);

CREATE TABLE runs (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id     bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    commit_sha  text NOT NULL,
    kind        text NOT NULL CONSTRAINT runs_kind_known
                CHECK (kind IN ('baseline', 'compare', 'calibrate')),
    config_hash text NOT NULL DEFAULT '',
    config      json,                     -- the benchmark configuration
    machine     text NOT NULL DEFAULT '', -- short machine id
    env         json,                     -- the machine fingerprint
    started_at  timestamptz NOT NULL,
    ended_at    timestamptz,
    status      text NOT NULL CONSTRAINT runs_status_known
                CHECK (status IN ('ok', 'build-failed', 'crashed', 'timed-out', 'no-output')),
    detail      text NOT NULL DEFAULT '', -- why it failed: exit status, stderr tail
    FOREIGN KEY (repo_id, commit_sha) REFERENCES commits (repo_id, sha) ON DELETE CASCADE
);

-- History and Trend: baseline runs of a repository in time order.
CREATE INDEX runs_repo_kind_time ON runs (repo_id, kind, started_at);
-- Runs of given commits (a comparison's base and head).
CREATE INDEX runs_repo_commit ON runs (repo_id, commit_sha);

CREATE TABLE samples (
    run_id    bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       integer NOT NULL, -- position in the run's sample list
    benchmark text NOT NULL CONSTRAINT samples_benchmark_nonempty CHECK (benchmark <> ''),
    phase     text NOT NULL,
    unit      text NOT NULL CONSTRAINT samples_unit_nonempty CHECK (unit <> ''),
    -- finite: NaN sorts above Infinity in PostgreSQL, so this excludes it too
    value     double precision NOT NULL
              CONSTRAINT samples_value_finite CHECK (value > '-Infinity' AND value < 'Infinity'),
    PRIMARY KEY (run_id, seq)
);

-- No index by (benchmark, phase, unit): History and Trend find their runs
-- through runs_repo_kind_time and read each run's samples through the
-- primary key. Such an index made every saved run dirty about one index
-- page per key (5x slower saves on a database of 1,000 runs) and led the
-- PostgreSQL planner astray before the first ANALYZE.

CREATE TABLE comparisons (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id    bigint NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    base_sha   text NOT NULL,
    head_sha   text NOT NULL,
    created_at timestamptz NOT NULL,
    verdict    text NOT NULL DEFAULT '',
    inputs     json, -- what was compared: runs, thresholds
    report     json, -- analysis's report
    markdown   text NOT NULL DEFAULT '' -- the rendered comment
);

CREATE INDEX comparisons_repo_head ON comparisons (repo_id, head_sha, created_at);

-- +goose Down
DROP TABLE comparisons;
DROP TABLE samples;
DROP TABLE runs;
DROP TABLE commits;
DROP TABLE repos;
