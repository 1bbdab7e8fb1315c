package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/perfbot/perfbot/analysis"
)

// A Series is one (repository, benchmark, phase, unit) that ok timed
// baseline runs measured: one trend perfbot can chart.
type Series struct {
	Repo string
	analysis.Key
}

// SeriesRuns is how many of each repository's newest ok timed baseline
// runs TrendSeries reads.
const SeriesRuns = 500

// TrendSeries lists the series that each repository's newest SeriesRuns
// ok timed baseline runs measured, sorted by repository, benchmark, phase
// and unit (the dashboard's index). Reading only the newest runs keeps it
// fast on a long history (reading every sample of every run took 2.9 s
// over 1,000,000 samples in SQLite) and leaves out series that are no
// longer measured.
func (db *DB) TrendSeries(ctx context.Context) ([]Series, error) {
	rows, err := db.db.QueryContext(ctx, db.db.Rebind(`
		WITH newest AS (
			SELECT id, repo_id FROM (
				SELECT r.id, r.repo_id,
				       row_number() OVER (PARTITION BY r.repo_id ORDER BY r.started_at DESC, r.id DESC) AS n
				FROM runs r
				WHERE r.kind = ? AND r.status = ? AND r.tool = ''
			) ranked
			WHERE n <= ?
		)
		SELECT DISTINCT p.name, s.benchmark, s.phase, s.unit
		FROM newest r
		JOIN samples s ON s.run_id = r.id
		JOIN repos p ON p.id = r.repo_id
		ORDER BY 1, 2, 3, 4`), string(KindBaseline), string(analysis.StatusOK), SeriesRuns)
	if err != nil {
		return nil, fmt.Errorf("trend series: %w", err)
	}
	defer rows.Close()
	var out []Series
	for rows.Next() {
		var s Series
		if err := rows.Scan(&s.Repo, &s.Benchmark, &s.Phase, &s.Unit); err != nil {
			return nil, fmt.Errorf("trend series: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trend series: %w", err)
	}
	return out, nil
}

// LatestComparison returns the newest stored comparison of head against
// base in repo, or an error wrapping ErrNotFound.
func (db *DB) LatestComparison(ctx context.Context, repo, base, head string) (*Comparison, error) {
	var id int64
	err := db.db.GetContext(ctx, &id, db.db.Rebind(`
		SELECT c.id FROM comparisons c JOIN repos p ON p.id = c.repo_id
		WHERE p.name = ? AND c.base_sha = ? AND c.head_sha = ?
		ORDER BY c.created_at DESC, c.id DESC LIMIT 1`), repo, base, head)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("comparison of %s against %s in %s: %w", short12(head), short12(base), repo, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("comparison of %s against %s in %s: %w", short12(head), short12(base), repo, err)
	}
	return db.Comparison(ctx, id)
}

// ErrAmbiguous is wrapped by ResolveCommit's error for a prefix that
// several stored commits begin with.
var ErrAmbiguous = errors.New("ambiguous")

// ResolveCommit returns the one commit SHA of repo in the store (a run's
// commit, or a stored comparison's base or head) that begins with
// prefix, lowercase hexadecimal; an error wrapping ErrNotFound when none
// does, or ErrAmbiguous (naming up to five) when several do. SHAs are
// stored lowercase, so the prefix is a range: from prefix to prefix+"g".
func (db *DB) ResolveCommit(ctx context.Context, repo, prefix string) (string, error) {
	lo, hi := prefix, prefix+"g"
	var shas []string
	err := db.db.SelectContext(ctx, &shas, db.db.Rebind(`
		SELECT sha FROM (
			SELECT r.commit_sha AS sha FROM runs r JOIN repos p ON p.id = r.repo_id
			WHERE p.name = ? AND r.commit_sha >= ? AND r.commit_sha < ?
			UNION SELECT c.base_sha FROM comparisons c JOIN repos p ON p.id = c.repo_id
			WHERE p.name = ? AND c.base_sha >= ? AND c.base_sha < ?
			UNION SELECT c.head_sha FROM comparisons c JOIN repos p ON p.id = c.repo_id
			WHERE p.name = ? AND c.head_sha >= ? AND c.head_sha < ?
		) s ORDER BY sha LIMIT 6`), repo, lo, hi, repo, lo, hi, repo, lo, hi)
	switch {
	case err != nil:
		return "", fmt.Errorf("resolve commit %s in %s: %w", prefix, repo, err)
	case len(shas) == 0:
		return "", &kindError{fmt.Sprintf("no stored commit of %s begins with %s", repo, prefix), ErrNotFound}
	case len(shas) > 1:
		more := ""
		if len(shas) > 5 {
			shas, more = shas[:5], ", …"
		}
		return "", &kindError{fmt.Sprintf("%s is the beginning of several stored commits of %s (%s%s)", prefix, repo, strings.Join(shas, ", "), more), ErrAmbiguous}
	}
	return shas[0], nil
}

// kindError is an error whose message says it all and that matches kind
// (errors.Is), without ": not found" tacked on for a reader.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

func short12(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
