package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/jmoiron/sqlx"
)

// ErrSameStore is returned by Copy when the source and the destination
// are one database.
var ErrSameStore = errors.New("the source and the destination are the same database")

// ErrSchemaTooOld is returned by Copy for a database whose schema is
// older than this perfbot's: perfbot migrate brings it up to date.
var ErrSchemaTooOld = errors.New("database schema is older than this perfbot")

// ErrCountMismatch is wrapped by Copy's error when, after copying, the
// destination does not hold as many rows of a table as the source has in
// the copied set.
var ErrCountMismatch = errors.New("counts differ")

// CopyOptions configure Copy.
type CopyOptions struct {
	// Progress, when set, is called with the counts so far after each
	// run, each comparison and each batch of other rows the copy
	// commits; it decides itself how often to show them.
	Progress func(CopyStats)
}

// A TableCount is what Copy did with one table's rows.
type TableCount struct {
	Table string
	// Source is how many rows of the table the copy covers: the
	// source's, as of the copy's start.
	Source int64
	// Copied rows were written to the destination; Present rows were
	// there already (found by their natural key) and were left as
	// they are.
	Copied, Present int64
}

// CopyStats says what Copy did, table by table.
type CopyStats struct {
	Repos, Commits, Sessions, Runs, Samples, Profiles, Comparisons, ReportedChanges TableCount
}

// copyTables names the tables of CopyStats, in Tables' order.
var copyTables = []string{"repos", "commits", "sessions", "runs", "samples", "profiles", "comparisons", "reported_changes"}

// Tables returns the counts in the order Copy copies the tables.
func (s CopyStats) Tables() []TableCount {
	return []TableCount{s.Repos, s.Commits, s.Sessions, s.Runs, s.Samples, s.Profiles, s.Comparisons, s.ReportedChanges}
}

// Copied returns how many rows Copy wrote, over all tables: 0 when the
// destination held everything already.
func (s CopyStats) Copied() int64 {
	var n int64
	for _, t := range s.Tables() {
		n += t.Copied
	}
	return n
}

// Copy copies what src keeps about measurements into dst: repositories,
// commits, sessions, runs with their samples, profiles and spans,
// comparisons and reported change points. It writes nothing to src, and
// both must have this perfbot's schema (ErrSchemaTooOld, ErrSchemaTooNew);
// one database on both sides is ErrSameStore.
//
// IDs are dst's own: every reference (a run's repository and session, a
// comparison's session and the run ids its inputs list as base_runs and
// head_runs) is translated to the row dst gave, or has, for the same
// thing. A row dst has already is found by its natural key, so a second
// Copy writes nothing, and rows copied from elsewhere merge:
//
//   - a repository by its name; a commit by its repository and SHA (one
//     dst has keeps what it recorded);
//   - a run by its repository, commit, kind, config hash, machine, tool
//     and start time (to the microsecond). Runs have no key of their own
//     (their id is the store's); these say what was measured, how, where
//     and when, and two runs that share them all would have started in
//     the same microsecond on one machine. Its session is not part of it:
//     that is an id too, and a run belongs to one session anyway;
//   - a session by its repository, kind, owner, label and start time; one
//     that dst has running and src has ended or abandoned is updated to
//     src's state, so a copy made while a session ran is brought up to
//     date by the next;
//   - a comparison by its repository, base, head and creation time;
//   - a reported change point by its key (the table's primary key).
//
// Should src hold several rows with one key, the k-th of them (in id
// order) is matched with the k-th such row in dst, so each is copied
// once.
//
// Each run goes in one transaction with its samples and profiles, so an
// interrupted Copy (ctx cancelled, the process killed) leaves no part of
// a run in dst and the next Copy carries on where it stopped. Each
// comparison is one statement; repositories go in one transaction, and
// commits, sessions and change points in transactions of up to 500 rows.
// Rows src gains while Copy runs are left for the next Copy.
//
// Not copied: the job queue (River's tables and pull_heads, the newest
// head of each pull request that was queued, which describes that queue),
// and webhook_deliveries: the ids of the deliveries a perfbot serve
// accepted, which only tell that server not to act twice on one
// delivery. The jobs those deliveries queued stay in src's queue, so
// copying the ids would make a server on dst refuse GitHub's redelivery
// of an event whose job it never had.
//
// At the end Copy counts each table's rows in the copied set on both
// sides (in dst, the rows it copied or found): a difference is an error
// wrapping ErrCountMismatch that names the table and both numbers. The
// stats are returned with any error, as far as the copy got.
func Copy(ctx context.Context, src, dst *DB, opts CopyOptions) (stats CopyStats, err error) {
	// A copy cut off by ctx fails with ctx's error whatever the driver
	// made of it: lib/pq answers a cancelled statement with its own error
	// ("canceling statement due to user request", then "bad connection"),
	// which callers cannot tell from a broken database.
	defer func() {
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
	}()
	c := &copier{
		src: src, dst: dst, opts: opts,
		repos: map[int64]int64{}, sessions: map[int64]int64{}, runs: map[int64]int64{}, comparisons: map[int64]int64{},
		commits: map[int64][]string{},
	}
	for i, t := range c.tables() {
		t.Table = copyTables[i]
	}
	if src == dst || SameDatabase(src.dsn, dst.dsn) {
		return c.stats, fmt.Errorf("copy: %w (%s)", ErrSameStore, src)
	}
	for _, side := range []struct {
		name string
		db   *DB
	}{{"source", src}, {"destination", dst}} {
		current, latest, err := side.db.SchemaVersion(ctx)
		if err != nil {
			return c.stats, fmt.Errorf("copy: %s %s: %w", side.name, side.db, err)
		}
		if current < latest {
			return c.stats, fmt.Errorf("copy: %s %s: %w: it is at version %d, this perfbot at %d; upgrade it with perfbot migrate",
				side.name, side.db, ErrSchemaTooOld, current, latest)
		}
		if current > latest {
			return c.stats, fmt.Errorf("copy: %s %s: %w: it is at version %d, this perfbot knows up to %d; copy with a newer perfbot",
				side.name, side.db, ErrSchemaTooNew, current, latest)
		}
	}
	steps := []struct {
		what string
		fn   func(context.Context) error
	}{
		{"count the source", c.bound},
		{"repositories", c.copyRepos},
		{"commits", c.copyCommits},
		{"sessions", c.copySessions},
		{"runs", c.copyRuns},
		{"comparisons", c.copyComparisons},
		{"reported change points", c.copyChanges},
		{"check counts", c.check},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
				// Interrupted: lib/pq says "canceling statement due to
				// user request", which callers cannot tell apart.
				err = fmt.Errorf("%w (%v)", cerr, err)
			}
			return c.stats, fmt.Errorf("copy %s to %s: %s: %w", src, dst, s.what, err)
		}
	}
	return c.stats, nil
}

// SameDatabase reports whether a and b address one database: one SQLite
// file (the same path, or the same file under another name), or one
// PostgreSQL database (the same host, port and database name; a server
// reached under two names, localhost and 127.0.0.1, is not recognised).
func SameDatabase(a, b DSN) bool {
	if a.Driver != b.Driver {
		return false
	}
	if a.Driver == DriverSQLite {
		if a.Path == b.Path {
			return true
		}
		ai, err := os.Stat(a.Path)
		if err != nil {
			return false
		}
		bi, err := os.Stat(b.Path)
		return err == nil && os.SameFile(ai, bi)
	}
	return postgresTarget(a) == postgresTarget(b)
}

// postgresTarget returns "host:port/database" for a postgres DSN, with
// lib/pq's defaults (localhost, 5432, the user's name) filled in.
func postgresTarget(d DSN) string {
	u, err := url.Parse(d.Source)
	if err != nil {
		return d.Source
	}
	q := u.Query()
	host, port := u.Hostname(), u.Port()
	if h := q.Get("host"); h != "" {
		host = h
	}
	if p := q.Get("port"); p != "" {
		port = p
	}
	db := strings.TrimPrefix(u.Path, "/")
	if n := q.Get("dbname"); n != "" {
		db = n
	}
	if db == "" {
		db = q.Get("user")
		if db == "" && u.User != nil {
			db = u.User.Username()
		}
	}
	host = cmp.Or(host, "localhost")
	if !strings.HasPrefix(host, "/") {
		host = strings.ToLower(host) // a name, not a socket directory
	}
	return host + ":" + cmp.Or(port, "5432") + "/" + db
}

// copyBatch is how many commits, sessions or reported change points one
// destination transaction writes.
const copyBatch = 500

// runPage is how many runs (their samples with them, in one query) or
// comparisons one read of the source fetches.
const runPage = 100

// A copier is one Copy: the maps from source ids to destination ids,
// the natural keys of what the destination holds, and the counts.
type copier struct {
	src, dst *DB
	opts     CopyOptions
	stats    CopyStats

	// The copied set: source rows with ids up to these, read at the
	// start (comparisons first, so that every run and session a copied
	// comparison names is in the set, then runs, then sessions).
	maxComparison, maxRun, maxSession int64

	repos, sessions, runs, comparisons map[int64]int64    // source id → destination id
	commits                            map[int64][]string // destination repo id → SHAs copied or found
	changes                            []changeRow
}

func (c *copier) progress() {
	if c.opts.Progress != nil {
		c.opts.Progress(c.stats)
	}
}

// bound fixes the copied set and counts it, for progress.
func (c *copier) bound(ctx context.Context) error {
	for _, m := range []struct {
		dst   *int64
		table string
	}{{&c.maxComparison, "comparisons"}, {&c.maxRun, "runs"}, {&c.maxSession, "sessions"}} {
		if err := c.src.db.GetContext(ctx, m.dst, `SELECT coalesce(max(id), 0) FROM `+m.table); err != nil {
			return err
		}
	}
	counts, err := c.sourceCounts(ctx)
	if err != nil {
		return err
	}
	for t, n := range counts {
		t.Source = n
	}
	return nil
}

// tables returns the counts in the order Copy copies the tables.
func (c *copier) tables() []*TableCount {
	s := &c.stats
	return []*TableCount{&s.Repos, &s.Commits, &s.Sessions, &s.Runs, &s.Samples, &s.Profiles, &s.Comparisons, &s.ReportedChanges}
}

// sourceCounts counts the rows of the copied set in the source.
func (c *copier) sourceCounts(ctx context.Context) (map[*TableCount]int64, error) {
	queries := []struct {
		count *TableCount
		q     string
		args  []any
	}{
		{&c.stats.Repos, `SELECT count(*) FROM repos`, nil},
		{&c.stats.Commits, `SELECT count(*) FROM commits`, nil},
		{&c.stats.Sessions, `SELECT count(*) FROM sessions WHERE id <= ?`, []any{c.maxSession}},
		{&c.stats.Runs, `SELECT count(*) FROM runs WHERE id <= ?`, []any{c.maxRun}},
		{&c.stats.Samples, `SELECT count(*) FROM samples WHERE run_id <= ?`, []any{c.maxRun}},
		{&c.stats.Profiles, `SELECT count(*) FROM profiles WHERE run_id <= ?`, []any{c.maxRun}},
		{&c.stats.Comparisons, `SELECT count(*) FROM comparisons WHERE id <= ?`, []any{c.maxComparison}},
		{&c.stats.ReportedChanges, `SELECT count(*) FROM reported_changes`, nil},
	}
	out := make(map[*TableCount]int64, len(queries))
	for _, q := range queries {
		var n int64
		if err := c.src.db.GetContext(ctx, &n, c.src.db.Rebind(q.q), q.args...); err != nil {
			return nil, fmt.Errorf("count %s: %w", q.count.Table, err)
		}
		out[q.count] = n
	}
	return out, nil
}

// copyRepos copies the repositories in one transaction.
func (c *copier) copyRepos(ctx context.Context) error {
	var rows []struct {
		ID   int64  `db:"id"`
		Name string `db:"name"`
	}
	if err := c.src.db.SelectContext(ctx, &rows, `SELECT id, name FROM repos ORDER BY id`); err != nil {
		return err
	}
	tx, err := c.dst.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var copied, present int64
	for _, r := range rows {
		var id int64
		err := tx.GetContext(ctx, &id, tx.Rebind(`SELECT id FROM repos WHERE name = ?`), r.Name)
		switch {
		case err == nil:
			present++
		case errors.Is(err, sql.ErrNoRows):
			if err := tx.GetContext(ctx, &id, tx.Rebind(`INSERT INTO repos (name) VALUES (?) RETURNING id`), r.Name); err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
			copied++
		default:
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		c.repos[r.ID] = id
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	c.stats.Repos.Copied, c.stats.Repos.Present = copied, present
	c.progress()
	return nil
}

// repo returns the destination id of source repository id.
func (c *copier) repo(id int64) (int64, error) {
	d, ok := c.repos[id]
	if !ok {
		// Added to the source after its repositories were read.
		return 0, fmt.Errorf("repository %d of the source is not in the copied set (added while copying?): copy again", id)
	}
	return d, nil
}

// copyCommits copies the commits, copyBatch per transaction, in the
// source's (repository, SHA) order.
func (c *copier) copyCommits(ctx context.Context) error {
	type commitRow struct {
		RepoID     int64  `db:"repo_id"`
		SHA        string `db:"sha"`
		Parents    string `db:"parents"`
		AuthorTime dbTime `db:"author_time"`
		Subject    string `db:"subject"`
	}
	var (
		afterRepo int64 = -1
		afterSHA  string
	)
	for {
		var rows []commitRow
		err := c.src.db.SelectContext(ctx, &rows, c.src.db.Rebind(`
			SELECT repo_id, sha, parents, author_time, subject FROM commits
			WHERE (repo_id, sha) > (?, ?)
			ORDER BY repo_id, sha LIMIT ?`), afterRepo, afterSHA, copyBatch)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		tx, err := c.dst.db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		var copied, present int64
		for _, r := range rows {
			repo, err := c.repo(r.RepoID)
			if err == nil {
				var n int64
				n, err = execRows(ctx, tx, `INSERT INTO commits (repo_id, sha, parents, author_time, subject) VALUES (?, ?, ?, ?, ?)
					ON CONFLICT (repo_id, sha) DO NOTHING`, repo, r.SHA, r.Parents, r.AuthorTime, r.Subject)
				copied += n
				present += 1 - n
			}
			if err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("%s: %w", r.SHA, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		for _, r := range rows {
			repo := c.repos[r.RepoID]
			c.commits[repo] = append(c.commits[repo], r.SHA)
		}
		c.stats.Commits.Copied += copied
		c.stats.Commits.Present += present
		c.progress()
		last := rows[len(rows)-1]
		afterRepo, afterSHA = last.RepoID, last.SHA
	}
}

// execRows runs an insert in tx and returns how many rows it wrote.
func execRows(ctx context.Context, tx *sqlx.Tx, q string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, tx.Rebind(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// A matcher pairs source rows with destination rows of the same natural
// key: the k-th source row of a key, in id order, is the k-th destination
// row of that key, so that rows sharing a key are each copied once.
type matcher[K comparable] struct {
	dst  map[K][]int64 // destination ids by key, in id order
	seen map[K]int     // source rows of each key met so far
}

func newMatcher[K comparable]() *matcher[K] {
	return &matcher[K]{dst: map[K][]int64{}, seen: map[K]int{}}
}

// match returns the destination id of the next source row of key k, or
// false when the destination has none: the row is to be copied, and add
// records its new id.
func (m *matcher[K]) match(k K) (int64, bool) {
	i := m.seen[k]
	m.seen[k] = i + 1
	if i < len(m.dst[k]) {
		return m.dst[k][i], true
	}
	return 0, false
}

func (m *matcher[K]) add(k K, id int64) { m.dst[k] = append(m.dst[k], id) }

// loadKeys fills m with the destination's rows that query selects: their
// id first, then what key makes of the rest.
func loadKeys[K comparable, R any](ctx context.Context, db *DB, m *matcher[K], query string, id func(*R) int64, key func(*R) K) error {
	rows, err := db.db.QueryxContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r R
		if err := rows.StructScan(&r); err != nil {
			return err
		}
		m.add(key(&r), id(&r))
	}
	return rows.Err()
}

// check counts each table's rows of the copied set in the source again,
// and in the destination the rows the copy wrote or found, and says
// where they differ.
func (c *copier) check(ctx context.Context) error {
	want, err := c.sourceCounts(ctx)
	if err != nil {
		return err
	}
	// The tables without ids were read whole as the copy went, and may
	// have grown since it started: their set is what was read.
	for _, t := range []*TableCount{&c.stats.Repos, &c.stats.Commits, &c.stats.ReportedChanges} {
		t.Source = t.Copied + t.Present
		want[t] = t.Source
	}
	runIDs := values(c.runs)
	got := map[*TableCount]func() (int64, error){
		&c.stats.Repos:           func() (int64, error) { return countIn(ctx, c.dst, "repos", "id", values(c.repos)) },
		&c.stats.Commits:         func() (int64, error) { return c.countCommits(ctx) },
		&c.stats.Sessions:        func() (int64, error) { return countIn(ctx, c.dst, "sessions", "id", values(c.sessions)) },
		&c.stats.Runs:            func() (int64, error) { return countIn(ctx, c.dst, "runs", "id", runIDs) },
		&c.stats.Samples:         func() (int64, error) { return countIn(ctx, c.dst, "samples", "run_id", runIDs) },
		&c.stats.Profiles:        func() (int64, error) { return countIn(ctx, c.dst, "profiles", "run_id", runIDs) },
		&c.stats.Comparisons:     func() (int64, error) { return countIn(ctx, c.dst, "comparisons", "id", values(c.comparisons)) },
		&c.stats.ReportedChanges: func() (int64, error) { return c.countChanges(ctx) },
	}
	var diffs []string
	for _, t := range c.tables() {
		n, err := got[t]()
		if err != nil {
			return fmt.Errorf("count %s: %w", t.Table, err)
		}
		if n != want[t] {
			diffs = append(diffs, fmt.Sprintf("%s: the source has %d, the destination %d of them", t.Table, want[t], n))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %s", ErrCountMismatch, strings.Join(diffs, "; "))
	}
	return nil
}

func values(m map[int64]int64) []int64 {
	out := make([]int64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// countIn counts the rows of table in db whose column is one of ids.
func countIn(ctx context.Context, db *DB, table, column string, ids []int64) (int64, error) {
	var total int64
	for start := 0; start < len(ids); start += idBatch {
		batch := ids[start:min(start+idBatch, len(ids))]
		var n int64
		err := db.db.GetContext(ctx, &n, db.db.Rebind(
			`SELECT count(*) FROM `+table+` WHERE `+column+` IN (`+placeholders(len(batch))+`)`), anys(batch)...)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// countCommits counts the destination's commits that the copy wrote or
// found.
func (c *copier) countCommits(ctx context.Context) (int64, error) {
	var total int64
	for repo, shas := range c.commits {
		for start := 0; start < len(shas); start += idBatch {
			batch := shas[start:min(start+idBatch, len(shas))]
			var n int64
			err := c.dst.db.GetContext(ctx, &n, c.dst.db.Rebind(
				`SELECT count(*) FROM commits WHERE repo_id = ? AND sha IN (`+placeholders(len(batch))+`)`),
				append([]any{repo}, anys(batch)...)...)
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

// countChanges counts the destination's reported change points that the
// copy wrote or found.
func (c *copier) countChanges(ctx context.Context) (int64, error) {
	var total int64
	const batchSize = 100 // 600 parameters
	for start := 0; start < len(c.changes); start += batchSize {
		batch := c.changes[start:min(start+batchSize, len(c.changes))]
		args := make([]any, 0, changeArgs*len(batch))
		for i := range batch {
			args = append(args, batch[i].args()...)
		}
		var n int64
		err := c.dst.db.GetContext(ctx, &n, c.dst.db.Rebind(`
			SELECT count(*) FROM reported_changes
			WHERE (repo_id, machine, benchmark, phase, unit, commit_sha) IN (VALUES `+
			strings.TrimSuffix(strings.Repeat("(CAST(? AS BIGINT), ?, ?, ?, ?, ?), ", len(batch)), ", ")+`)`), args...)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
