-- The newest head of each pull request perfbot has queued a comparison
-- for, as GitHub ordered the pull request's events: updated_at is the
-- pull request's updated_at in the delivery (GitHub's clock), and the head
-- SHA breaks a tie. Queueing a comparison upserts its row first and keeps
-- it locked until the transaction commits, so the deliveries of one pull
-- request are serialised however many arrive at once: the newest head
-- wins, an older one queues nothing, and the winner cancels every live
-- job of another head (store/queue; docs/bot.md "Newer pushes").

-- +goose Up
CREATE TABLE pull_heads (
    repo       text NOT NULL,   -- owner/name, as the jobs' args spell it
    pr         bigint NOT NULL,
    head_sha   text NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (repo, pr)
);

-- +goose Down
DROP TABLE pull_heads;
