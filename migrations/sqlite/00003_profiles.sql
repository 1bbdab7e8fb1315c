-- Profiles the benchmark runs wrote (a CPU profile per run of a benchmark
-- with cpuprofile set), stored as written: pprof's gzipped protocol
-- buffer. They go in with their run, in SaveRun's transaction, and go
-- when it goes.

-- +goose Up
CREATE TABLE profiles (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    -- the benchmark command that wrote it: the config's benchmark name
    benchmark  TEXT NOT NULL CONSTRAINT profiles_benchmark_nonempty CHECK (benchmark <> ''),
    kind       TEXT NOT NULL CONSTRAINT profiles_kind_nonempty CHECK (kind <> ''), -- 'cpu'
    data       BLOB NOT NULL CONSTRAINT profiles_data_nonempty CHECK (length(data) > 0),
    -- the size of data, to list profiles without reading them
    bytes      INTEGER NOT NULL CONSTRAINT profiles_bytes_length CHECK (bytes = length(data)),
    created_at TEXT NOT NULL CONSTRAINT profiles_created_at_utc
               CHECK (created_at LIKE '____-__-__T__:__:__.______Z')
) STRICT;

-- A run's profiles; also what ON DELETE CASCADE from runs looks up.
CREATE INDEX profiles_run ON profiles (run_id);

-- +goose Down
DROP TABLE profiles;
