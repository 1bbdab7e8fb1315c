package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/perfbot/perfbot/analysis"
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

// microseconds formats a stored time as a key: UTC, microseconds.
func microseconds(t dbTime) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

type sessionKey struct {
	repo                      int64 // the destination's id
	kind, owner, label, start string
}

type sessionCopyRow struct {
	ID        int64  `db:"id"`
	RepoID    int64  `db:"repo_id"`
	Kind      string `db:"kind"`
	Owner     string `db:"owner"`
	Label     string `db:"label"`
	StartedAt dbTime `db:"started_at"`
	EndedAt   dbTime `db:"ended_at"`
	State     string `db:"state"`
}

// copySessions copies the sessions, copyBatch per transaction. A session
// the destination has running that the source has ended or abandoned
// takes the source's state and end.
func (c *copier) copySessions(ctx context.Context) error {
	m := newMatcher[sessionKey]()
	err := loadKeys(ctx, c.dst, m, `SELECT id, repo_id, kind, owner, label, started_at, ended_at, state FROM sessions ORDER BY id`,
		func(r *sessionCopyRow) int64 { return r.ID },
		func(r *sessionCopyRow) sessionKey {
			return sessionKey{r.RepoID, r.Kind, r.Owner, r.Label, microseconds(r.StartedAt)}
		})
	if err != nil {
		return err
	}
	for after := int64(0); ; {
		var rows []sessionCopyRow
		err := c.src.db.SelectContext(ctx, &rows, c.src.db.Rebind(`
			SELECT id, repo_id, kind, owner, label, started_at, ended_at, state FROM sessions
			WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`), after, c.maxSession, copyBatch)
		if err != nil || len(rows) == 0 {
			return err
		}
		if err := c.copySessionBatch(ctx, m, rows); err != nil {
			return err
		}
		c.progress()
		after = rows[len(rows)-1].ID
	}
}

func (c *copier) copySessionBatch(ctx context.Context, m *matcher[sessionKey], rows []sessionCopyRow) error {
	tx, err := c.dst.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	type added struct {
		key     sessionKey
		src, id int64
	}
	var (
		news    []added
		present = map[int64]int64{}
	)
	for _, r := range rows {
		repo, err := c.repo(r.RepoID)
		if err != nil {
			return fmt.Errorf("session %d: %w", r.ID, err)
		}
		k := sessionKey{repo, r.Kind, r.Owner, r.Label, microseconds(r.StartedAt)}
		if id, ok := m.match(k); ok {
			present[r.ID] = id
			if r.State != string(SessionRunning) {
				// A session ended since the last copy: say so here too.
				_, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE sessions SET state = ?, ended_at = ? WHERE id = ? AND state = ?`),
					r.State, r.EndedAt, id, string(SessionRunning))
				if err != nil {
					return fmt.Errorf("session %d: %w", r.ID, err)
				}
			}
			continue
		}
		var id int64
		err = tx.GetContext(ctx, &id, tx.Rebind(`
			INSERT INTO sessions (repo_id, kind, owner, label, started_at, ended_at, state)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			repo, r.Kind, r.Owner, r.Label, r.StartedAt, r.EndedAt, r.State)
		if err != nil {
			return fmt.Errorf("session %d: %w", r.ID, err)
		}
		news = append(news, added{k, r.ID, id})
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for src, id := range present {
		c.sessions[src] = id
	}
	for _, a := range news {
		// The matcher learns of new rows only once they are committed,
		// so that a failed batch leaves it as the destination is.
		c.sessions[a.src] = a.id
		m.add(a.key, a.id)
	}
	c.stats.Sessions.Copied += int64(len(news))
	c.stats.Sessions.Present += int64(len(present))
	return nil
}

// session returns the destination id of a source session (0 for none).
func (c *copier) session(id sql.NullInt64) (sql.NullInt64, error) {
	if !id.Valid {
		return id, nil
	}
	d, ok := c.sessions[id.Int64]
	if !ok {
		return id, fmt.Errorf("session %d is not in the source's sessions", id.Int64)
	}
	return sql.NullInt64{Int64: d, Valid: true}, nil
}

type runKey struct {
	repo                                          int64 // the destination's id
	sha, kind, configHash, machine, tool, started string
}

type runCopyRow struct {
	ID         int64         `db:"id"`
	RepoID     int64         `db:"repo_id"`
	CommitSHA  string        `db:"commit_sha"`
	Kind       string        `db:"kind"`
	ConfigHash string        `db:"config_hash"`
	Config     dbText        `db:"config"`
	Machine    string        `db:"machine"`
	Env        dbText        `db:"env"`
	StartedAt  dbTime        `db:"started_at"`
	EndedAt    dbTime        `db:"ended_at"`
	Status     string        `db:"status"`
	Detail     string        `db:"detail"`
	Tool       string        `db:"tool"`
	Spans      dbText        `db:"spans"`
	SessionID  sql.NullInt64 `db:"session_id"`
	Round      int           `db:"round"`
}

func (r *runCopyRow) key(repo int64) runKey {
	return runKey{repo, r.CommitSHA, r.Kind, r.ConfigHash, r.Machine, r.Tool, microseconds(r.StartedAt)}
}

// copyRuns copies the runs in id order, a page of the source at a time,
// each run in a transaction of its own with its samples and profiles.
func (c *copier) copyRuns(ctx context.Context) error {
	m := newMatcher[runKey]()
	err := loadKeys(ctx, c.dst, m, `SELECT id, repo_id, commit_sha, kind, config_hash, machine, tool, started_at FROM runs ORDER BY id`,
		func(r *runCopyRow) int64 { return r.ID },
		func(r *runCopyRow) runKey { return r.key(r.RepoID) })
	if err != nil {
		return err
	}
	for after := int64(0); ; {
		var rows []runCopyRow
		err := c.src.db.SelectContext(ctx, &rows, c.src.db.Rebind(`
			SELECT id, repo_id, commit_sha, kind, config_hash, config, machine, env,
			       started_at, ended_at, status, detail, tool, spans, session_id, round
			FROM runs WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`), after, c.maxRun, runPage)
		if err != nil || len(rows) == 0 {
			return err
		}
		if err := c.copyRunPage(ctx, m, rows); err != nil {
			return err
		}
		after = rows[len(rows)-1].ID
	}
}

func (c *copier) copyRunPage(ctx context.Context, m *matcher[runKey], rows []runCopyRow) error {
	var (
		todo    []*runCopyRow
		keys    = map[int64]runKey{}
		present []int64
	)
	for i := range rows {
		r := &rows[i]
		repo, err := c.repo(r.RepoID)
		if err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		k := r.key(repo)
		if id, ok := m.match(k); ok {
			c.runs[r.ID] = id
			present = append(present, r.ID)
			continue
		}
		keys[r.ID] = k
		todo = append(todo, r)
	}
	if len(present) > 0 {
		// The rows of runs already there are counted, not read.
		samples, err := countIn(ctx, c.src, "samples", "run_id", present)
		if err != nil {
			return fmt.Errorf("count samples: %w", err)
		}
		profiles, err := countIn(ctx, c.src, "profiles", "run_id", present)
		if err != nil {
			return fmt.Errorf("count profiles: %w", err)
		}
		c.stats.Runs.Present += int64(len(present))
		c.stats.Samples.Present += samples
		c.stats.Profiles.Present += profiles
		c.progress()
	}
	if len(todo) == 0 {
		return nil
	}
	ids := make([]int64, len(todo))
	for i, r := range todo {
		ids[i] = r.ID
	}
	samples := make(map[int64][]analysis.Sample, len(todo))
	err := c.src.eachSample(ctx, ids, nil, func(id int64, s analysis.Sample) {
		samples[id] = append(samples[id], s)
	})
	if err != nil {
		return fmt.Errorf("samples: %w", err)
	}
	var profiled []int64
	err = c.src.db.SelectContext(ctx, &profiled, c.src.db.Rebind(
		`SELECT DISTINCT run_id FROM profiles WHERE run_id IN (`+placeholders(len(ids))+`)`), anys(ids)...)
	if err != nil {
		return fmt.Errorf("profiles: %w", err)
	}
	hasProfiles := make(map[int64]bool, len(profiled))
	for _, id := range profiled {
		hasProfiles[id] = true
	}
	for _, r := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		var profiles []profileCopyRow
		if hasProfiles[r.ID] {
			// Read run by run: a profile may be megabytes.
			err := c.src.db.SelectContext(ctx, &profiles, c.src.db.Rebind(
				`SELECT benchmark, kind, data, created_at FROM profiles WHERE run_id = ? ORDER BY id`), r.ID)
			if err != nil {
				return fmt.Errorf("run %d: profiles: %w", r.ID, err)
			}
		}
		id, err := c.copyRun(ctx, r, samples[r.ID], profiles)
		if err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		c.runs[r.ID] = id
		m.add(keys[r.ID], id)
		c.stats.Runs.Copied++
		c.stats.Samples.Copied += int64(len(samples[r.ID]))
		c.stats.Profiles.Copied += int64(len(profiles))
		c.progress()
	}
	return nil
}

type profileCopyRow struct {
	Benchmark string `db:"benchmark"`
	Kind      string `db:"kind"`
	Data      []byte `db:"data"`
	CreatedAt dbTime `db:"created_at"`
}

// copyRun writes one run, its samples and its profiles in one
// transaction and returns the run's destination id.
func (c *copier) copyRun(ctx context.Context, r *runCopyRow, samples []analysis.Sample, profiles []profileCopyRow) (int64, error) {
	session, err := c.session(r.SessionID)
	if err != nil {
		return 0, err
	}
	tx, err := c.dst.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var id int64
	err = tx.GetContext(ctx, &id, tx.Rebind(`
		INSERT INTO runs (repo_id, commit_sha, kind, config_hash, config, machine, env,
		                  started_at, ended_at, status, detail, tool, spans, session_id, round)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`),
		c.repos[r.RepoID], r.CommitSHA, r.Kind, r.ConfigHash, r.Config, r.Machine, r.Env,
		r.StartedAt, r.EndedAt, r.Status, r.Detail, r.Tool, r.Spans, session, r.Round)
	if err != nil {
		return 0, err
	}
	insert := insertSamples
	if c.dst.dsn.Driver == DriverPostgres {
		insert = copySamples
	}
	if err := insert(ctx, tx, id, samples); err != nil {
		return 0, fmt.Errorf("samples: %w", err)
	}
	q := tx.Rebind(`INSERT INTO profiles (run_id, benchmark, kind, data, bytes, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
	for _, p := range profiles {
		if _, err := tx.ExecContext(ctx, q, id, p.Benchmark, p.Kind, p.Data, len(p.Data), p.CreatedAt); err != nil {
			return 0, fmt.Errorf("profile %s %s: %w", p.Benchmark, p.Kind, err)
		}
	}
	return id, tx.Commit()
}

type comparisonKey struct {
	repo                  int64 // the destination's id
	base, head, createdAt string
}

type comparisonCopyRow struct {
	ID        int64         `db:"id"`
	RepoID    int64         `db:"repo_id"`
	BaseSHA   string        `db:"base_sha"`
	HeadSHA   string        `db:"head_sha"`
	CreatedAt dbTime        `db:"created_at"`
	Verdict   string        `db:"verdict"`
	Inputs    dbText        `db:"inputs"`
	Report    dbText        `db:"report"`
	Markdown  string        `db:"markdown"`
	SessionID sql.NullInt64 `db:"session_id"`
	PR        int           `db:"pr"`
}

func (r *comparisonCopyRow) key(repo int64) comparisonKey {
	return comparisonKey{repo, r.BaseSHA, r.HeadSHA, microseconds(r.CreatedAt)}
}

// copyComparisons copies the comparisons in id order, one statement
// each (a comparison is one row).
func (c *copier) copyComparisons(ctx context.Context) error {
	m := newMatcher[comparisonKey]()
	err := loadKeys(ctx, c.dst, m, `SELECT id, repo_id, base_sha, head_sha, created_at FROM comparisons ORDER BY id`,
		func(r *comparisonCopyRow) int64 { return r.ID },
		func(r *comparisonCopyRow) comparisonKey { return r.key(r.RepoID) })
	if err != nil {
		return err
	}
	for after := int64(0); ; {
		// Reports are tens of kilobytes: a page of them at a time.
		var rows []comparisonCopyRow
		err := c.src.db.SelectContext(ctx, &rows, c.src.db.Rebind(`
			SELECT id, repo_id, base_sha, head_sha, created_at, verdict, inputs, report, markdown, session_id, pr
			FROM comparisons WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`), after, c.maxComparison, runPage)
		if err != nil || len(rows) == 0 {
			return err
		}
		for i := range rows {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := c.copyComparison(ctx, m, &rows[i]); err != nil {
				return fmt.Errorf("comparison %d: %w", rows[i].ID, err)
			}
			c.progress()
		}
		after = rows[len(rows)-1].ID
	}
}

func (c *copier) copyComparison(ctx context.Context, m *matcher[comparisonKey], r *comparisonCopyRow) error {
	repo, err := c.repo(r.RepoID)
	if err != nil {
		return err
	}
	k := r.key(repo)
	if id, ok := m.match(k); ok {
		c.comparisons[r.ID] = id
		c.stats.Comparisons.Present++
		return nil
	}
	session, err := c.session(r.SessionID)
	if err != nil {
		return err
	}
	inputs, err := remapInputs(string(r.Inputs), c.runs)
	if err != nil {
		return fmt.Errorf("inputs: %w", err)
	}
	var id int64
	err = c.dst.db.GetContext(ctx, &id, c.dst.db.Rebind(`
		INSERT INTO comparisons (repo_id, base_sha, head_sha, created_at, verdict, inputs, report, markdown, session_id, pr)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`),
		repo, r.BaseSHA, r.HeadSHA, r.CreatedAt, r.Verdict, dbText(inputs), r.Report, r.Markdown, session, r.PR)
	if err != nil {
		return err
	}
	c.comparisons[r.ID] = id
	m.add(k, id)
	c.stats.Comparisons.Copied++
	return nil
}

// inputRuns are the keys of a comparison's inputs that list run ids.
var inputRuns = []string{"base_runs", "head_runs"}

// remapInputs returns a comparison's inputs with the run ids that
// inputRuns list replaced by the destination's ids; a run not in runs
// (gone from the source) is left out, since its id would name another
// run in the destination. Inputs that are not a JSON object, or that list
// no runs, are returned as they are.
func remapInputs(in string, runs map[int64]int64) (string, error) {
	if in == "" {
		return in, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(in), &obj); err != nil {
		return in, nil // not an object: nothing of ours to translate
	}
	changed := false
	for _, name := range inputRuns {
		raw, ok := obj[name]
		if !ok {
			continue
		}
		var ids []int64
		if err := json.Unmarshal(raw, &ids); err != nil {
			continue
		}
		out := make([]int64, 0, len(ids))
		for _, id := range ids {
			if d, ok := runs[id]; ok {
				out = append(out, d)
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return "", err
		}
		obj[name], changed = b, true
	}
	if !changed {
		return in, nil
	}
	// Keys come out sorted and compact, as the runner wrote them.
	b, err := json.Marshal(obj)
	return string(b), err
}

type changeRow struct {
	RepoID     int64  `db:"repo_id"`
	Machine    string `db:"machine"`
	Benchmark  string `db:"benchmark"`
	Phase      string `db:"phase"`
	Unit       string `db:"unit"`
	CommitSHA  string `db:"commit_sha"`
	ReportedAt dbTime `db:"reported_at"`
}

// changeArgs is how many parameters a reported change's key takes.
const changeArgs = 6

func (r *changeRow) args() []any {
	return []any{r.RepoID, r.Machine, r.Benchmark, r.Phase, r.Unit, r.CommitSHA}
}

// copyChanges copies the reported change points, copyBatch per
// transaction. There are a few per change point ever reported, so they
// are read at once.
func (c *copier) copyChanges(ctx context.Context) error {
	var rows []changeRow
	err := c.src.db.SelectContext(ctx, &rows, `
		SELECT repo_id, machine, benchmark, phase, unit, commit_sha, reported_at FROM reported_changes
		ORDER BY repo_id, machine, benchmark, phase, unit, commit_sha`)
	if err != nil {
		return err
	}
	for start := 0; start < len(rows); start += copyBatch {
		batch := rows[start:min(start+copyBatch, len(rows))]
		tx, err := c.dst.db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		var copied int64
		for i := range batch {
			r := &batch[i]
			repo, err := c.repo(r.RepoID)
			if err == nil {
				r.RepoID = repo // from here on, the destination's
				var n int64
				n, err = execRows(ctx, tx, `
					INSERT INTO reported_changes (repo_id, machine, benchmark, phase, unit, commit_sha, reported_at)
					VALUES (?, ?, ?, ?, ?, ?, ?)
					ON CONFLICT (repo_id, machine, benchmark, phase, unit, commit_sha) DO NOTHING`,
					append(r.args(), r.ReportedAt)...)
				copied += n
			}
			if err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("%s at %s: %w", r.Benchmark, r.CommitSHA, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		c.changes = append(c.changes, batch...)
		c.stats.ReportedChanges.Copied += copied
		c.stats.ReportedChanges.Present += int64(len(batch)) - copied
		c.progress()
	}
	return nil
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
