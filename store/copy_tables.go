package store

// copy_tables.go copies the measurements table by table, for Copy
// (copy.go): sessions, runs with their samples and profiles, comparisons
// and change points, each matched to rows the destination already has.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/perfbot/perfbot/analysis"
)

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
