-- The pull request a comparison was made for (0: none, as for perfbot
-- compare on the command line), so that the dashboard lists each
-- comparison with its pull request.

-- +goose Up
ALTER TABLE comparisons ADD COLUMN pr INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE comparisons DROP COLUMN pr;
