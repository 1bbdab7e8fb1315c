package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SaveComparison stores a comparison and returns its id. It does not
// modify c.
func (db *DB) SaveComparison(ctx context.Context, c *Comparison) (int64, error) {
	if c.Repo == "" || c.BaseSHA == "" || c.HeadSHA == "" {
		return 0, fmt.Errorf("save comparison: repository, base and head are required")
	}
	created := c.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	tx, err := db.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("save comparison: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit

	repoID, err := upsertRepo(ctx, tx, c.Repo)
	if err != nil {
		return 0, fmt.Errorf("save comparison: repository %s: %w", c.Repo, err)
	}
	var id int64
	err = tx.QueryRowxContext(ctx, tx.Rebind(`
		INSERT INTO comparisons (repo_id, base_sha, head_sha, created_at, verdict, inputs, report, markdown, session_id, pr)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`),
		repoID, c.BaseSHA, c.HeadSHA, dbTime{created}, c.Verdict, dbText(c.Inputs), dbText(c.Report), c.Markdown,
		sql.NullInt64{Int64: c.SessionID, Valid: c.SessionID != 0}, c.PR,
	).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("save comparison: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("save comparison: %w", err)
	}
	return id, nil
}

// Comparison returns the comparison with the given id, or an error
// wrapping ErrNotFound.
func (db *DB) Comparison(ctx context.Context, id int64) (*Comparison, error) {
	var row comparisonRow
	err := db.db.GetContext(ctx, &row, db.db.Rebind(`
		SELECT c.id, p.name AS repo, c.base_sha, c.head_sha, c.created_at,
		       c.verdict, c.inputs, c.report, c.markdown, c.pr
		FROM comparisons c JOIN repos p ON p.id = c.repo_id
		WHERE c.id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("comparison %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("comparison %d: %w", id, err)
	}
	c := row.comparison()
	return &c, nil
}

// comparisonRow is a comparisons row as the reads select it (inputs,
// report and markdown left empty by a read that does not select them).
type comparisonRow struct {
	ID        int64  `db:"id"`
	Repo      string `db:"repo"`
	BaseSHA   string `db:"base_sha"`
	HeadSHA   string `db:"head_sha"`
	CreatedAt dbTime `db:"created_at"`
	Verdict   string `db:"verdict"`
	Inputs    dbText `db:"inputs"`
	Report    dbText `db:"report"`
	Markdown  string `db:"markdown"`
	PR        int    `db:"pr"`
}

func (r comparisonRow) comparison() Comparison {
	return Comparison{ID: r.ID, Repo: r.Repo, BaseSHA: r.BaseSHA, HeadSHA: r.HeadSHA, CreatedAt: r.CreatedAt.Time,
		Verdict: r.Verdict, Inputs: string(r.Inputs), Report: string(r.Report), Markdown: r.Markdown, PR: r.PR}
}

// RecentComparisons returns the newest limit stored comparisons, newest
// first, without their reports: what the dashboard's index lists.
func (db *DB) RecentComparisons(ctx context.Context, limit int) ([]Comparison, error) {
	return db.listComparisons(ctx, "recent comparisons", `ORDER BY c.created_at DESC, c.id DESC LIMIT ?`, limit)
}

// ComparisonCounts returns how many comparisons were stored with each
// verdict (for perfbot serve's /metrics).
func (db *DB) ComparisonCounts(ctx context.Context) (map[string]int64, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT verdict, count(*) FROM comparisons GROUP BY verdict`)
	if err != nil {
		return nil, fmt.Errorf("count comparisons: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var v string
		var n int64
		if err := rows.Scan(&v, &n); err != nil {
			return nil, fmt.Errorf("count comparisons: %w", err)
		}
		out[v] = n
	}
	return out, rows.Err()
}

// PairComparisons returns every stored comparison of head against base
// in repo, newest first, without their reports: the compare page lists
// them all, so that no comparison of a pair is out of reach.
func (db *DB) PairComparisons(ctx context.Context, repo, base, head string) ([]Comparison, error) {
	return db.listComparisons(ctx, fmt.Sprintf("comparisons of %s against %s in %s", short12(head), short12(base), repo), `
		WHERE p.name = ? AND c.base_sha = ? AND c.head_sha = ?
		ORDER BY c.created_at DESC, c.id DESC`, repo, base, head)
}

// CommitComparisons returns the newest limit stored comparisons of repo
// whose base or head is sha, newest first, without their reports.
func (db *DB) CommitComparisons(ctx context.Context, repo, sha string, limit int) ([]Comparison, error) {
	return db.listComparisons(ctx, fmt.Sprintf("comparisons of %s in %s", short12(sha), repo), `
		WHERE p.name = ? AND (c.base_sha = ? OR c.head_sha = ?)
		ORDER BY c.created_at DESC, c.id DESC LIMIT ?`, repo, sha, sha, limit)
}

// listComparisons selects comparisons, without their reports, by a
// WHERE and ORDER BY clause over c (comparisons) and p (repos).
func (db *DB) listComparisons(ctx context.Context, what, where string, args ...any) ([]Comparison, error) {
	var rows []comparisonRow
	err := db.db.SelectContext(ctx, &rows, db.db.Rebind(`
		SELECT c.id, p.name AS repo, c.base_sha, c.head_sha, c.created_at, c.verdict, c.pr
		FROM comparisons c JOIN repos p ON p.id = c.repo_id `+where), args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make([]Comparison, len(rows))
	for i, r := range rows {
		out[i] = r.comparison()
	}
	return out, nil
}
