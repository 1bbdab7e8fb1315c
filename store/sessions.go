package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// A SessionState is where a measuring session stands.
type SessionState string

// The session states.
const (
	// SessionRunning: its process has not ended it. A killed process
	// leaves its session running until AbandonSessions sees it gone.
	SessionRunning SessionState = "running"
	// SessionEnded: its process ended it, having stored every run it
	// meant to store or given up with an error it reported.
	SessionEnded SessionState = "ended"
	// SessionAbandoned: its process died without ending it.
	SessionAbandoned SessionState = "abandoned"
)

// A Session is one measuring session: a comparison, a baseline or a
// bisection that one process ran (one job attempt in the bot), and the
// runs it stored (RunRecord.SessionID). Its runs are each whole, but
// only an ended session's set of runs is: reuse (bisect's RunValues,
// RunQuery.Whole) and noise history (History) take runs of ended
// sessions only, besides runs stored without a session (before
// sessions existed).
type Session struct {
	ID   int64
	Repo string
	Kind Kind
	// Owner names the process that runs the session, so that a later
	// process can tell when it is gone (see AbandonSessions): opaque to
	// the store; "" for one that cannot be told.
	Owner string
	// Label says what ran it: the job and its attempt, or the command.
	Label     string
	StartedAt time.Time
	EndedAt   time.Time
	State     SessionState
}

// ErrSessionNotRunning is wrapped by EndSession's error for a session
// that is not running: unknown, ended before, or abandoned.
var ErrSessionNotRunning = errors.New("session not running")

// BeginSession stores a running session of s.Repo (added as needed)
// started now, and returns its id. s.Kind is required; ID, StartedAt,
// EndedAt and State are set by the store.
func (db *DB) BeginSession(ctx context.Context, s Session) (int64, error) {
	switch {
	case s.Repo == "":
		return 0, errors.New("begin session: no repository")
	case !s.Kind.valid():
		return 0, fmt.Errorf("begin session: unknown kind %q", s.Kind)
	}
	tx, err := db.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("begin session: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	repoID, err := upsertRepo(ctx, tx, s.Repo)
	if err != nil {
		return 0, fmt.Errorf("begin session: repository %s: %w", s.Repo, err)
	}
	var id int64
	err = tx.QueryRowxContext(ctx, tx.Rebind(`
		INSERT INTO sessions (repo_id, kind, owner, label, started_at, state)
		VALUES (?, ?, ?, ?, ?, ?)
		RETURNING id`), repoID, string(s.Kind), s.Owner, s.Label, dbTime{time.Now()}, string(SessionRunning),
	).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("begin session: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("begin session: %w", err)
	}
	return id, nil
}

// EndSession marks running session id ended, now. A session that is not
// running is left as it is, and the error wraps ErrSessionNotRunning
// and says what it is.
func (db *DB) EndSession(ctx context.Context, id int64) error {
	res, err := db.db.ExecContext(ctx, db.db.Rebind(`
		UPDATE sessions SET state = ?, ended_at = ? WHERE id = ? AND state = ?`),
		string(SessionEnded), dbTime{time.Now()}, id, string(SessionRunning))
	if err != nil {
		return fmt.Errorf("end session %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("end session %d: %w", id, err)
	} else if n == 1 {
		return nil
	}
	s, err := db.Session(ctx, id)
	if err != nil {
		return fmt.Errorf("end session %d: %w", id, err)
	}
	return fmt.Errorf("end session %d: %w: it is %s since %s", id, ErrSessionNotRunning, s.State, s.EndedAt.Format(time.RFC3339))
}

// Session returns session id; an unknown id is an error that wraps
// sql.ErrNoRows.
func (db *DB) Session(ctx context.Context, id int64) (*Session, error) {
	var row sessionRow
	err := db.db.GetContext(ctx, &row, db.db.Rebind(sessionQuery+` WHERE s.id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %d: %w", id, err)
	}
	if err != nil {
		return nil, fmt.Errorf("session %d: %w", id, err)
	}
	s := row.session()
	return &s, nil
}

// RunningSessions returns every running session, oldest first.
func (db *DB) RunningSessions(ctx context.Context) ([]Session, error) {
	var rows []sessionRow
	err := db.db.SelectContext(ctx, &rows, db.db.Rebind(sessionQuery+` WHERE s.state = ? ORDER BY s.id`), string(SessionRunning))
	if err != nil {
		return nil, fmt.Errorf("running sessions: %w", err)
	}
	out := make([]Session, len(rows))
	for i := range rows {
		out[i] = rows[i].session()
	}
	return out, nil
}

// AbandonSessions marks abandoned, now, every running session whose
// owner gone reports gone, and returns them. A session that ends while
// this runs stays ended.
func (db *DB) AbandonSessions(ctx context.Context, gone func(owner string) bool) ([]Session, error) {
	running, err := db.RunningSessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("abandon sessions: %w", err)
	}
	var out []Session
	for _, s := range running {
		if s.Owner == "" || !gone(s.Owner) {
			continue
		}
		now := time.Now()
		res, err := db.db.ExecContext(ctx, db.db.Rebind(`
			UPDATE sessions SET state = ?, ended_at = ? WHERE id = ? AND state = ?`),
			string(SessionAbandoned), dbTime{now}, s.ID, string(SessionRunning))
		if err != nil {
			return out, fmt.Errorf("abandon session %d: %w", s.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return out, fmt.Errorf("abandon session %d: %w", s.ID, err)
		} else if n == 1 {
			s.State, s.EndedAt = SessionAbandoned, now.UTC().Truncate(time.Microsecond)
			out = append(out, s)
		}
	}
	return out, nil
}

// wholeRuns is the condition on runs r that keeps those whose set is
// whole: stored without a session, or by a session that ended.
const wholeRuns = `(r.session_id IS NULL OR EXISTS (
	SELECT 1 FROM sessions ws WHERE ws.id = r.session_id AND ws.state = 'ended'))`

// addWhole adds to f the condition that keeps whole runs, and the runs
// of session own (the caller's own, still running) when it is not 0.
func (f *filter) addWhole(own int64) {
	if own == 0 {
		f.add(wholeRuns)
		return
	}
	f.add(`(r.session_id = ? OR `+wholeRuns+`)`, own)
}

type sessionRow struct {
	ID        int64  `db:"id"`
	Repo      string `db:"repo"`
	Kind      string `db:"kind"`
	Owner     string `db:"owner"`
	Label     string `db:"label"`
	StartedAt dbTime `db:"started_at"`
	EndedAt   dbTime `db:"ended_at"`
	State     string `db:"state"`
}

const sessionQuery = `
	SELECT s.id, p.name AS repo, s.kind, s.owner, s.label, s.started_at, s.ended_at, s.state
	FROM sessions s JOIN repos p ON p.id = s.repo_id`

func (row *sessionRow) session() Session {
	return Session{
		ID: row.ID, Repo: row.Repo, Kind: Kind(row.Kind), Owner: row.Owner, Label: row.Label,
		StartedAt: row.StartedAt.Time, EndedAt: row.EndedAt.Time, State: SessionState(row.State),
	}
}

// EndedSessionComparison returns the newest comparison stored by an ended
// session whose label starts with labelPrefix (a job's attempts share
// "KIND job ID attempt "), or 0. A retried job asks it first: when an
// earlier attempt measured, stored and ended, its comparison is published
// instead of measuring again.
func (db *DB) EndedSessionComparison(ctx context.Context, labelPrefix string) (int64, error) {
	var id int64
	err := db.db.QueryRowxContext(ctx, db.db.Rebind(`
		SELECT c.id FROM comparisons c JOIN sessions s ON s.id = c.session_id
		WHERE s.state = 'ended' AND substr(s.label, 1, ?) = ?
		ORDER BY c.id DESC LIMIT 1`), len(labelPrefix), labelPrefix).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("find the comparison of an ended session %q: %w", labelPrefix, err)
	}
	return id, nil
}
