package queue

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// A Job is one row of the job queue, as the dashboard lists it.
type Job struct {
	ID          int64      `json:"id"`
	Kind        string     `json:"kind"`
	Queue       string     `json:"queue"`
	State       string     `json:"state"` // River's: available, running, completed, …
	Attempt     int        `json:"attempt"`
	MaxAttempts int        `json:"max_attempts"`
	CreatedAt   time.Time  `json:"created_at"`
	AttemptedAt *time.Time `json:"attempted_at,omitempty"`
	FinalizedAt *time.Time `json:"finalized_at,omitempty"`
	Args        string     `json:"args"` // the job's arguments, JSON
}

// List returns the newest limit jobs of every state, newest first, from
// River's river_job table (PostgreSQL only).
func List(ctx context.Context, db *sql.DB, limit int) ([]Job, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT id, kind, queue, state::text, attempt, max_attempts, created_at, attempted_at, finalized_at, args::text
		FROM river_job ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var (
			j                   Job
			attempted, finished sql.NullTime
		)
		if err := rows.Scan(&j.ID, &j.Kind, &j.Queue, &j.State, &j.Attempt, &j.MaxAttempts, &j.CreatedAt,
			&attempted, &finished, &j.Args); err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		if attempted.Valid {
			j.AttemptedAt = &attempted.Time
		}
		if finished.Valid {
			j.FinalizedAt = &finished.Time
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}
