package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/analysis"
)

// A ValuesQuery selects one series' values in the ok timed runs of some
// commits, made under one configuration on one machine: the runs a
// bisection can reuse instead of measuring again. Every field is
// required: values of other configurations or machines do not compare.
type ValuesQuery struct {
	Repo       string
	Commits    []string
	ConfigHash string
	Machine    string
	Key        analysis.Key
	// Own is the caller's session, whose runs are taken although it
	// has not ended; 0 for none.
	Own int64
}

// A RunValue is one run's value of a series.
type RunValue struct {
	RunID     int64
	Commit    string
	Kind      Kind
	StartedAt time.Time
	// SessionID is the session that made the run, 0 for none; Round is
	// the round of that session it ran in, from 1, 0 when unknown. Runs
	// of one round of one session were measured beside each other.
	SessionID int64
	Round     int
	// Value is the run's value: the median of the key's values when the
	// run reported several, as analysis takes it.
	Value float64
}

// RunValues returns, per commit of q.Commits, q.Key's value in every ok
// timed run of that commit (runs of every kind; runs under a tool such as
// callgrind measure something else) with q.ConfigHash and q.Machine,
// oldest first, one value per run. Only whole runs count (see
// RunQuery.Whole), and q.Own's. A commit without such runs has no
// entry.
func (db *DB) RunValues(ctx context.Context, q ValuesQuery) (map[string][]RunValue, error) {
	switch {
	case q.Repo == "":
		return nil, errors.New("run values: no repository")
	case q.ConfigHash == "" || q.Machine == "":
		return nil, errors.New("run values: a config hash and a machine are required: values of other setups do not compare")
	case q.Key.Benchmark == "" || q.Key.Unit == "":
		return nil, fmt.Errorf("run values: key %v needs a benchmark and a unit", q.Key)
	}
	out := make(map[string][]RunValue)
	for start := 0; start < len(q.Commits); start += idBatch {
		batch := q.Commits[start:min(start+idBatch, len(q.Commits))]
		if err := db.runValues(ctx, q, batch, out); err != nil {
			return nil, fmt.Errorf("run values: %w", err)
		}
	}
	return out, nil
}

func (db *DB) runValues(ctx context.Context, q ValuesQuery, commits []string, out map[string][]RunValue) error {
	var f filter
	f.add("p.name = ?", q.Repo)
	f.add("r.commit_sha IN ("+placeholders(len(commits))+")", anys(commits)...)
	f.add("r.config_hash = ?", q.ConfigHash)
	f.add("r.machine = ?", q.Machine)
	f.add("r.status = ?", string(analysis.StatusOK))
	f.add("r.tool = ''")
	f.addWhole(q.Own)
	f.add("s.benchmark = ?", q.Key.Benchmark)
	f.add("s.phase = ?", q.Key.Phase)
	f.add("s.unit = ?", q.Key.Unit)
	// Runs through runs_repo_commit, then each run's samples through
	// their primary key.
	rows, err := db.db.QueryContext(ctx, db.db.Rebind(`
		SELECT r.id, r.commit_sha, r.kind, r.started_at, r.session_id, r.round, s.value
		FROM runs r
		JOIN repos p ON p.id = r.repo_id
		JOIN samples s ON s.run_id = r.id`+f.where()+`
		ORDER BY r.started_at, r.id, s.seq`), f.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		cur  *RunValue
		vals []float64
	)
	flush := func() {
		if cur != nil {
			cur.Value = median(vals)
			out[cur.Commit] = append(out[cur.Commit], *cur)
			cur, vals = nil, vals[:0]
		}
	}
	for rows.Next() {
		var (
			v       RunValue
			kind    string
			started dbTime
			session sql.NullInt64
			value   float64
		)
		if err := rows.Scan(&v.RunID, &v.Commit, &kind, &started, &session, &v.Round, &value); err != nil {
			return err
		}
		if cur == nil || cur.RunID != v.RunID {
			flush()
			v.Kind, v.StartedAt, v.SessionID = Kind(kind), started.Time, session.Int64
			cur = &v
		}
		vals = append(vals, value)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	flush()
	return nil
}
