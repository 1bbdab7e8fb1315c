-- Change points on the default branch that perfbot reported on their
-- commit (a GitHub commit comment), one row per series and commit, so
-- that a change point is never reported twice however often the
-- detector runs over it. A row is written before the comment is posted
-- and removed when posting fails.

-- +goose Up
CREATE TABLE reported_changes (
    repo_id     integer NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    machine     text NOT NULL,
    benchmark   text NOT NULL,
    phase       text NOT NULL,
    unit        text NOT NULL,
    commit_sha  text NOT NULL CONSTRAINT reported_changes_sha_nonempty CHECK (commit_sha <> ''),
    reported_at text NOT NULL, -- UTC, fixed-width RFC 3339 with microseconds
    PRIMARY KEY (repo_id, machine, benchmark, phase, unit, commit_sha)
) STRICT;

-- +goose Down
DROP TABLE reported_changes;
