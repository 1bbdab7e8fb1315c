package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/analysis"
)

// A ReportedChange is a change point perfbot reported on its commit: the
// series (repository, machine, key) and the commit where it starts.
type ReportedChange struct {
	Repo    string
	Machine string
	Key     analysis.Key
	Commit  string
	// ReportedAt is when it was claimed; ClaimChange sets it.
	ReportedAt time.Time
}

func (c ReportedChange) check() error {
	if c.Repo == "" || c.Machine == "" || c.Commit == "" || c.Key.Benchmark == "" || c.Key.Unit == "" {
		return errors.New("a repository, a machine, a commit, a benchmark and a unit are required")
	}
	return nil
}

// ClaimChange records that change point c is being reported and says
// whether it was not recorded before: false means it was reported already
// (or is being reported by another process) and must not be again. It is
// atomic across processes sharing the database. The repository must have
// runs stored. Call ReleaseChange when the report could not be posted.
func (db *DB) ClaimChange(ctx context.Context, c ReportedChange) (bool, error) {
	if err := c.check(); err != nil {
		return false, fmt.Errorf("claim change point: %w", err)
	}
	res, err := db.db.ExecContext(ctx, db.db.Rebind(`
		INSERT INTO reported_changes (repo_id, machine, benchmark, phase, unit, commit_sha, reported_at)
		SELECT id, ?, ?, ?, ?, ?, ? FROM repos WHERE name = ?
		ON CONFLICT (repo_id, machine, benchmark, phase, unit, commit_sha) DO NOTHING`),
		c.Machine, c.Key.Benchmark, c.Key.Phase, c.Key.Unit, c.Commit, dbTime{time.Now()}, c.Repo)
	if err != nil {
		return false, fmt.Errorf("claim change point %s at %s: %w", c.Key, c.Commit, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim change point %s at %s: %w", c.Key, c.Commit, err)
	}
	if n == 0 {
		// Reported already, or no such repository.
		var known int
		if err := db.db.GetContext(ctx, &known, db.db.Rebind(`SELECT count(*) FROM repos WHERE name = ?`), c.Repo); err != nil {
			return false, fmt.Errorf("claim change point %s at %s: %w", c.Key, c.Commit, err)
		}
		if known == 0 {
			return false, fmt.Errorf("claim change point %s at %s: %w: repository %s", c.Key, c.Commit, ErrNotFound, c.Repo)
		}
	}
	return n == 1, nil
}

// ReleaseChange removes a claim ClaimChange recorded, so that a change
// point whose report could not be posted is reported on a later try.
func (db *DB) ReleaseChange(ctx context.Context, c ReportedChange) error {
	_, err := db.db.ExecContext(ctx, db.db.Rebind(`
		DELETE FROM reported_changes
		WHERE repo_id = (SELECT id FROM repos WHERE name = ?)
		  AND machine = ? AND benchmark = ? AND phase = ? AND unit = ? AND commit_sha = ?`),
		c.Repo, c.Machine, c.Key.Benchmark, c.Key.Phase, c.Key.Unit, c.Commit)
	if err != nil {
		return fmt.Errorf("release change point %s at %s: %w", c.Key, c.Commit, err)
	}
	return nil
}

// ReportedChanges returns the change points reported on repo's series of
// machine, oldest first.
func (db *DB) ReportedChanges(ctx context.Context, repo, machine string) ([]ReportedChange, error) {
	rows, err := db.db.QueryContext(ctx, db.db.Rebind(`
		SELECT rc.benchmark, rc.phase, rc.unit, rc.commit_sha, rc.reported_at
		FROM reported_changes rc JOIN repos p ON p.id = rc.repo_id
		WHERE p.name = ? AND rc.machine = ?
		ORDER BY rc.reported_at, rc.commit_sha`), repo, machine)
	if err != nil {
		return nil, fmt.Errorf("reported changes: %w", err)
	}
	defer rows.Close()
	var out []ReportedChange
	for rows.Next() {
		c := ReportedChange{Repo: repo, Machine: machine}
		var at dbTime
		if err := rows.Scan(&c.Key.Benchmark, &c.Key.Phase, &c.Key.Unit, &c.Commit, &at); err != nil {
			return nil, fmt.Errorf("reported changes: %w", err)
		}
		c.ReportedAt = at.Time
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reported changes: %w", err)
	}
	return out, nil
}
