-- The newest head of each pull request perfbot has queued a comparison
-- for (see the PostgreSQL migration of the same number). The job queue
-- lives only in PostgreSQL, so nothing writes this table on SQLite; it is
-- here so that both dialects share one schema version.

-- +goose Up
CREATE TABLE pull_heads (
    repo       text NOT NULL,
    pr         integer NOT NULL,
    head_sha   text NOT NULL,
    updated_at text NOT NULL, -- UTC, fixed-width RFC 3339 with microseconds
    PRIMARY KEY (repo, pr)
) STRICT;

-- +goose Down
DROP TABLE pull_heads;
