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
	// ScheduledAt is when the job became (or becomes) available to work.
	ScheduledAt time.Time `json:"scheduled_at"`
	Args        string    `json:"args"` // the job's arguments, JSON
	// LastError is the error of the job's last failed attempt, "" when
	// none failed.
	LastError string `json:"last_error,omitempty"`
}

// List returns the newest limit jobs of every state, newest first, from
// River's river_job table (PostgreSQL only).
func List(ctx context.Context, db *sql.DB, limit int) ([]Job, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT id, kind, queue, state::text, attempt, max_attempts, created_at, attempted_at, finalized_at, scheduled_at, args::text,
		       coalesce(errors[array_length(errors, 1)]->>'error', '')
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
			&attempted, &finished, &j.ScheduledAt, &j.Args, &j.LastError); err != nil {
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

// A QueueStatus says how a queue is being served: its jobs waiting to
// start, the oldest of them, its running jobs and when a worker last
// started one of its jobs.
type QueueStatus struct {
	Queue     string `json:"queue"`
	Available int    `json:"available"`
	Running   int    `json:"running"`
	// OldestAvailable is when the longest-waiting available job became
	// available; LastAttempt when a worker last started any job of the
	// queue. Each is nil when there is none.
	OldestAvailable *time.Time `json:"oldest_available,omitempty"`
	LastAttempt     *time.Time `json:"last_attempt,omitempty"`
}

// Statuses returns every queue that has jobs, by name (PostgreSQL only):
// the dashboard warns about a queue whose jobs wait while no worker
// starts any.
func Statuses(ctx context.Context, db *sql.DB) ([]QueueStatus, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT queue,
		       count(*) FILTER (WHERE state = 'available'),
		       count(*) FILTER (WHERE state = 'running'),
		       min(scheduled_at) FILTER (WHERE state = 'available'),
		       max(attempted_at)
		FROM river_job GROUP BY queue ORDER BY queue`)
	if err != nil {
		return nil, fmt.Errorf("queue statuses: %w", err)
	}
	defer rows.Close()
	var out []QueueStatus
	for rows.Next() {
		var (
			q              QueueStatus
			oldest, latest sql.NullTime
		)
		if err := rows.Scan(&q.Queue, &q.Available, &q.Running, &oldest, &latest); err != nil {
			return nil, fmt.Errorf("queue statuses: %w", err)
		}
		if oldest.Valid {
			q.OldestAvailable = &oldest.Time
		}
		if latest.Valid {
			q.LastAttempt = &latest.Time
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queue statuses: %w", err)
	}
	return out, nil
}
