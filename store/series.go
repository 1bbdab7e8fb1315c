package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

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

// HeadlineRuns is how many of each repository's newest ok timed baseline
// runs RecentHeadlines reads: enough for a sparkline of the last few
// dozen commits and a change point among them, few enough for the
// dashboard's front page to answer at once on a long history.
const HeadlineRuns = 300

// A HeadlinePoint is one baseline run's value of a benchmark's headline
// series: its total phase, or the series of a benchmark without phases.
type HeadlinePoint struct {
	Repo      string
	Key       analysis.Key
	RunID     int64
	Commit    string
	Machine   string
	StartedAt time.Time
	Value     float64
}

// RecentHeadlines returns the headline values in unit (phase "total" or
// "") of each repository's newest runs ok timed baseline runs, ordered by
// repository, benchmark, phase, start and run: the front page's latest
// values, sparklines and change points, in one query.
func (db *DB) RecentHeadlines(ctx context.Context, runs int, unit string) ([]HeadlinePoint, error) {
	rows, err := db.db.QueryContext(ctx, db.db.Rebind(`
		WITH newest AS (
			SELECT id, repo_id, commit_sha, machine, started_at FROM (
				SELECT r.id, r.repo_id, r.commit_sha, r.machine, r.started_at,
				       row_number() OVER (PARTITION BY r.repo_id ORDER BY r.started_at DESC, r.id DESC) AS n
				FROM runs r
				WHERE r.kind = ? AND r.status = ? AND r.tool = ''
			) ranked
			WHERE n <= ?
		)
		SELECT p.name, s.benchmark, s.phase, r.id, r.commit_sha, r.machine, r.started_at, s.value
		FROM newest r
		JOIN samples s ON s.run_id = r.id
		JOIN repos p ON p.id = r.repo_id
		WHERE s.phase IN ('total', '') AND s.unit = ?
		ORDER BY p.name, s.benchmark, s.phase, r.started_at, r.id, s.seq`),
		string(KindBaseline), string(analysis.StatusOK), runs, unit)
	if err != nil {
		return nil, fmt.Errorf("recent headlines: %w", err)
	}
	defer rows.Close()
	var (
		out  []HeadlinePoint
		vals []float64
	)
	flush := func() {
		if len(vals) > 0 {
			out[len(out)-1].Value = median(vals)
			vals = vals[:0]
		}
	}
	for rows.Next() {
		var (
			p       HeadlinePoint
			started dbTime
			v       float64
		)
		if err := rows.Scan(&p.Repo, &p.Key.Benchmark, &p.Key.Phase, &p.RunID, &p.Commit, &p.Machine, &started, &v); err != nil {
			return nil, fmt.Errorf("recent headlines: %w", err)
		}
		p.Key.Unit = unit
		if n := len(out); n == 0 || out[n-1].RunID != p.RunID || out[n-1].Key != p.Key || out[n-1].Repo != p.Repo {
			flush()
			p.StartedAt = started.Time
			out = append(out, p)
		}
		vals = append(vals, v) // a run that measured the series several times: its median
	}
	flush()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recent headlines: %w", err)
	}
	return out, nil
}

// Commits returns what the store knows of the given commits of repo
// (subject, author time, parents), by SHA; a commit it does not know is
// absent.
func (db *DB) Commits(ctx context.Context, repo string, shas []string) (map[string]Commit, error) {
	out := make(map[string]Commit, len(shas))
	if len(shas) == 0 {
		return out, nil
	}
	q, args, err := sqlx.In(`
		SELECT c.sha, c.parents, c.author_time, c.subject
		FROM commits c JOIN repos p ON p.id = c.repo_id
		WHERE p.name = ? AND c.sha IN (?)`, repo, shas)
	if err != nil {
		return nil, fmt.Errorf("commits of %s: %w", repo, err)
	}
	var rows []struct {
		SHA        string `db:"sha"`
		Parents    string `db:"parents"`
		AuthorTime dbTime `db:"author_time"`
		Subject    string `db:"subject"`
	}
	if err := db.db.SelectContext(ctx, &rows, db.db.Rebind(q), args...); err != nil {
		return nil, fmt.Errorf("commits of %s: %w", repo, err)
	}
	for _, r := range rows {
		out[r.SHA] = Commit{SHA: r.SHA, Parents: strings.Fields(r.Parents), AuthorTime: r.AuthorTime.Time, Subject: r.Subject}
	}
	return out, nil
}

// A RunsVersion identifies the store's runs as they are: the newest run's
// id and the number of runs. Runs are only ever added (a run gets a new,
// larger id) or, with their repository, removed, so a version that did
// not change means no run did: what the dashboard caches by.
type RunsVersion struct {
	MaxID int64 `db:"max_id"`
	Count int64 `db:"n"`
}

// RunsVersion returns the runs' version, in one cheap query.
func (db *DB) RunsVersion(ctx context.Context) (RunsVersion, error) {
	var v RunsVersion
	if err := db.db.GetContext(ctx, &v, `SELECT coalesce(max(id), 0) AS max_id, count(*) AS n FROM runs`); err != nil {
		return v, fmt.Errorf("runs version: %w", err)
	}
	return v, nil
}
