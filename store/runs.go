package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/perfbot/perfbot/analysis"
)

// SaveRun stores a run with its samples and profiles, its commit and its
// repository (both added or updated as needed) in one transaction, and
// returns the run's id. It does not modify r. Samples must have a
// benchmark, a unit and a finite value; one that does not fails the whole
// run, and so does a profile that fails to go in.
func (db *DB) SaveRun(ctx context.Context, r *RunRecord) (int64, error) {
	if err := r.validate(); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	tx, err := db.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit

	repoID, err := upsertRepo(ctx, tx, r.Repo)
	if err != nil {
		return 0, fmt.Errorf("save run: repository %s: %w", r.Repo, err)
	}
	if err := upsertCommit(ctx, tx, repoID, r.Commit); err != nil {
		return 0, fmt.Errorf("save run: commit %s: %w", r.Commit.SHA, err)
	}
	columns, values := "", ""
	args := []any{repoID, r.Commit.SHA, string(r.Kind), r.ConfigHash, dbText(r.Config), r.Machine, dbText(r.Env),
		dbTime{r.StartedAt}, dbTime{r.EndedAt}, string(r.Status), r.Detail, r.Tool}
	if r.SessionID != 0 {
		columns, values = ", session_id", ", ?"
		args = append(args, r.SessionID)
	}
	if r.Round != 0 {
		// Named only when known, as session_id: a run without a round
		// goes in as it did before the column existed (0).
		columns, values = columns+", round", values+", ?"
		args = append(args, r.Round)
	}
	if len(r.Spans) > 0 {
		// Named only when there are some: a run without spans goes in
		// as it did before the column existed (NULL).
		b, err := json.Marshal(r.Spans)
		if err != nil {
			return 0, fmt.Errorf("save run: spans: %w", err)
		}
		columns, values = columns+", spans", values+", ?"
		args = append(args, dbText(b))
	}
	var id int64
	err = tx.QueryRowxContext(ctx, tx.Rebind(`
		INSERT INTO runs (repo_id, commit_sha, kind, config_hash, config, machine, env,
		                  started_at, ended_at, status, detail, tool`+columns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`+values+`)
		RETURNING id`), args...,
	).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	if err := insertProfiles(ctx, tx, id, r.Profiles); err != nil {
		return 0, fmt.Errorf("save run: profiles: %w", err)
	}
	insert := insertSamples
	if db.dsn.Driver == DriverPostgres {
		insert = copySamples
	}
	if err := insert(ctx, tx, id, r.Samples); err != nil {
		return 0, fmt.Errorf("save run: samples: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	return id, nil
}

// upsertRepo returns the id of the repository named name, adding it when
// it is new.
func upsertRepo(ctx context.Context, tx *sqlx.Tx, name string) (int64, error) {
	var id int64
	sel := tx.Rebind(`SELECT id FROM repos WHERE name = ?`)
	err := tx.GetContext(ctx, &id, sel, name)
	if !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	// DO NOTHING: a concurrent transaction may add the same name first;
	// then the second SELECT sees its row.
	err = tx.GetContext(ctx, &id, tx.Rebind(`
		INSERT INTO repos (name) VALUES (?)
		ON CONFLICT (name) DO NOTHING
		RETURNING id`), name)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.GetContext(ctx, &id, sel, name)
	}
	return id, err
}

// upsertCommit adds a commit, or fills in what c knows about a recorded
// one.
func upsertCommit(ctx context.Context, tx *sqlx.Tx, repoID int64, c Commit) error {
	parents := strings.Join(c.Parents, " ")
	known := parents != "" || !c.AuthorTime.IsZero() || c.Subject != ""
	q := `INSERT INTO commits (repo_id, sha, parents, author_time, subject) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (repo_id, sha) DO NOTHING`
	if known {
		q = `INSERT INTO commits (repo_id, sha, parents, author_time, subject) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (repo_id, sha) DO UPDATE SET
			parents = CASE WHEN excluded.parents <> '' THEN excluded.parents ELSE commits.parents END,
			author_time = COALESCE(excluded.author_time, commits.author_time),
			subject = CASE WHEN excluded.subject <> '' THEN excluded.subject ELSE commits.subject END`
	}
	_, err := tx.ExecContext(ctx, tx.Rebind(q), repoID, c.SHA, parents, dbTime{c.AuthorTime}, c.Subject)
	return err
}

// sampleBatch is how many samples one INSERT carries: 6 parameters each,
// well inside SQLite's 32,766 and PostgreSQL's 65,535 parameters.
const sampleBatch = 500

func insertSamples(ctx context.Context, tx *sqlx.Tx, runID int64, samples []analysis.Sample) error {
	for start := 0; start < len(samples); start += sampleBatch {
		batch := samples[start:min(start+sampleBatch, len(samples))]
		var b strings.Builder
		b.WriteString("INSERT INTO samples (run_id, seq, benchmark, phase, unit, value) VALUES ")
		args := make([]any, 0, 6*len(batch))
		for i, s := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?)")
			args = append(args, runID, start+i, s.Benchmark, s.Phase, s.Unit, s.Value)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(b.String()), args...); err != nil {
			return err
		}
	}
	return nil
}

// copySamples inserts samples with PostgreSQL's COPY, which lib/pq
// streams in one go: 40% less time per run than multi-row INSERTs of
// 100 samples (see BenchmarkPostgres). A bad sample fails the final Exec.
func copySamples(ctx context.Context, tx *sqlx.Tx, runID int64, samples []analysis.Sample) error {
	if len(samples) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, "COPY samples (run_id, seq, benchmark, phase, unit, value) FROM STDIN")
	if err != nil {
		return err
	}
	defer st.Close()
	for i, s := range samples {
		if _, err := st.ExecContext(ctx, runID, i, s.Benchmark, s.Phase, s.Unit, s.Value); err != nil {
			return err
		}
	}
	_, err = st.ExecContext(ctx)
	return err
}

// insertProfiles inserts profiles, one row each: there is one per
// profiled benchmark of a run, and each may be megabytes.
func insertProfiles(ctx context.Context, tx *sqlx.Tx, runID int64, profiles []analysis.Profile) error {
	if len(profiles) == 0 {
		return nil
	}
	q := tx.Rebind(`INSERT INTO profiles (run_id, benchmark, kind, data, bytes, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
	now := dbTime{time.Now()}
	for _, p := range profiles {
		if _, err := tx.ExecContext(ctx, q, runID, p.Benchmark, p.Kind, p.Data, len(p.Data), now); err != nil {
			return fmt.Errorf("%s %s: %w", p.Benchmark, p.Kind, err)
		}
	}
	return nil
}

// Profiles returns the profiles of the runs runIDs, by run id, each run's in
// the order SaveRun got them. A run without profiles, or unknown, has no
// entry.
func (db *DB) Profiles(ctx context.Context, runIDs []int64) (map[int64][]analysis.Profile, error) {
	out := make(map[int64][]analysis.Profile)
	for start := 0; start < len(runIDs); start += idBatch {
		batch := runIDs[start:min(start+idBatch, len(runIDs))]
		rows, err := db.db.QueryContext(ctx, db.db.Rebind(`
			SELECT run_id, benchmark, kind, data FROM profiles
			WHERE run_id IN (`+placeholders(len(batch))+`)
			ORDER BY run_id, id`), anys(batch)...)
		if err != nil {
			return nil, fmt.Errorf("profiles: %w", err)
		}
		for rows.Next() {
			var (
				id int64
				p  analysis.Profile
			)
			if err := rows.Scan(&id, &p.Benchmark, &p.Kind, &p.Data); err != nil {
				rows.Close()
				return nil, fmt.Errorf("profiles: %w", err)
			}
			out[id] = append(out[id], p)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("profiles: %w", err)
		}
	}
	return out, nil
}

// runRow is one row of runQuery.
type runRow struct {
	ID         int64          `db:"id"`
	Repo       string         `db:"repo"`
	CommitSHA  string         `db:"commit_sha"`
	Parents    string         `db:"parents"`
	AuthorTime dbTime         `db:"author_time"`
	Subject    string         `db:"subject"`
	Kind       string         `db:"kind"`
	ConfigHash string         `db:"config_hash"`
	Config     dbText         `db:"config"`
	Machine    string         `db:"machine"`
	Env        dbText         `db:"env"`
	StartedAt  dbTime         `db:"started_at"`
	EndedAt    dbTime         `db:"ended_at"`
	Status     string         `db:"status"`
	Detail     string         `db:"detail"`
	Tool       string         `db:"tool"`
	Spans      dbText         `db:"spans"`
	SessionID  sql.NullInt64  `db:"session_id"`
	State      sql.NullString `db:"session_state"`
	Round      int            `db:"round"`
}

const runQuery = `
	SELECT r.id, p.name AS repo, r.commit_sha, c.parents, c.author_time, c.subject,
	       r.kind, r.config_hash, r.config, r.machine, r.env,
	       r.started_at, r.ended_at, r.status, r.detail, r.tool, r.spans,
	       r.session_id, x.state AS session_state, r.round
	FROM runs r
	JOIN repos p ON p.id = r.repo_id
	JOIN commits c ON c.repo_id = r.repo_id AND c.sha = r.commit_sha
	LEFT JOIN sessions x ON x.id = r.session_id`

// Runs returns the runs q selects with their samples, oldest first, and
// with their profiles when q.Profiles is set.
func (db *DB) Runs(ctx context.Context, q RunQuery) ([]RunRecord, error) {
	var f filter
	if q.Repo != "" {
		f.add("p.name = ?", q.Repo)
	}
	if len(q.Commits) > 0 {
		f.add("r.commit_sha IN ("+placeholders(len(q.Commits))+")", anys(q.Commits)...)
	}
	if q.Kind != "" {
		f.add("r.kind = ?", string(q.Kind))
	}
	if q.ConfigHash != "" {
		f.add("r.config_hash = ?", q.ConfigHash)
	}
	if q.Machine != "" {
		f.add("r.machine = ?", q.Machine)
	}
	if q.Status != "" {
		f.add("r.status = ?", string(q.Status))
	}
	if q.Whole {
		f.addWhole(q.Own)
	}
	query := runQuery + f.where() + " ORDER BY r.started_at DESC, r.id DESC"
	args := f.args
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	var rows []runRow
	if err := db.db.SelectContext(ctx, &rows, db.db.Rebind(query), args...); err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	slices.Reverse(rows)

	runs := make([]RunRecord, len(rows))
	byID := make(map[int64]*RunRecord, len(rows))
	ids := make([]int64, len(rows))
	for i, row := range rows {
		runs[i] = row.record()
		if row.Spans != "" {
			if err := json.Unmarshal([]byte(row.Spans), &runs[i].Spans); err != nil {
				return nil, fmt.Errorf("runs: run %d: spans: %w", row.ID, err)
			}
		}
		byID[row.ID] = &runs[i]
		ids[i] = row.ID
	}
	err := db.eachSample(ctx, ids, nil, func(id int64, s analysis.Sample) {
		byID[id].Samples = append(byID[id].Samples, s)
	})
	if err != nil {
		return nil, fmt.Errorf("runs: samples: %w", err)
	}
	if q.Profiles {
		profiles, err := db.Profiles(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		for id, ps := range profiles {
			byID[id].Profiles = ps
		}
	}
	return runs, nil
}

func (row *runRow) record() RunRecord {
	r := RunRecord{
		ID:   row.ID,
		Repo: row.Repo,
		Commit: Commit{
			SHA:        row.CommitSHA,
			Parents:    strings.Fields(row.Parents),
			AuthorTime: row.AuthorTime.Time,
			Subject:    row.Subject,
		},
		Kind:       Kind(row.Kind),
		ConfigHash: row.ConfigHash,
		Config:     string(row.Config),
		Machine:    row.Machine,
		Env:        string(row.Env),
		StartedAt:  row.StartedAt.Time,
		EndedAt:    row.EndedAt.Time,
		Status:     analysis.Status(row.Status),
		Detail:     row.Detail,
		Tool:       row.Tool,
		SessionID:  row.SessionID.Int64,
		Round:      row.Round,
	}
	if row.State.Valid {
		r.SessionState = SessionState(row.State.String)
	}
	if len(r.Commit.Parents) == 0 {
		r.Commit.Parents = nil
	}
	return r
}

// idBatch is how many run ids one samples query carries.
const idBatch = 1000

// eachSample calls fn for every sample of the runs ids, restricted to
// keys unless keys is empty, in the runs' stored order; one query per
// idBatch runs.
func (db *DB) eachSample(ctx context.Context, ids []int64, keys []analysis.Key, fn func(runID int64, s analysis.Sample)) error {
	for start := 0; start < len(ids); start += idBatch {
		if err := db.eachSampleBatch(ctx, ids[start:min(start+idBatch, len(ids))], keys, fn); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) eachSampleBatch(ctx context.Context, ids []int64, keys []analysis.Key, fn func(runID int64, s analysis.Sample)) error {
	var f filter
	f.add("run_id IN ("+placeholders(len(ids))+")", anys(ids)...)
	if len(keys) > 0 {
		// A row value IN a VALUES list: SQLite takes no list of row
		// values on the right of IN, but it takes a VALUES subquery, as
		// PostgreSQL does.
		args := make([]any, 0, 3*len(keys))
		for _, k := range keys {
			args = append(args, k.Benchmark, k.Phase, k.Unit)
		}
		f.add("(benchmark, phase, unit) IN (VALUES "+strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(keys)), ", ")+")", args...)
	}
	rows, err := db.db.QueryContext(ctx, db.db.Rebind(
		`SELECT run_id, benchmark, phase, unit, value FROM samples`+f.where()+` ORDER BY run_id, seq`), f.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id int64
			s  analysis.Sample
		)
		if err := rows.Scan(&id, &s.Benchmark, &s.Phase, &s.Unit, &s.Value); err != nil {
			return err
		}
		fn(id, s)
	}
	return rows.Err()
}

// A filter collects the conditions of a WHERE clause and their arguments.
type filter struct {
	conds []string
	args  []any
}

func (f *filter) add(cond string, args ...any) {
	f.conds = append(f.conds, cond)
	f.args = append(f.args, args...)
}

func (f *filter) where() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}

// placeholders returns "?, ?, …", n of them.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
