// Package queue is perfbot's job queue: River (riverqueue/river) over the
// same PostgreSQL pool as the store, through River's database/sql driver.
// perfbot serve inserts jobs; perfbot worker, on each GPU host, works
// them.
//
// In flow job arguments (a pull request to compare, a commit to record as
// baseline, a bisect request); out flow River clients that insert them
// with perfbot's rules — at most one live job per (repository, pull
// request, head SHA, kind), and a new head cancels the jobs for the old
// one — and that run the workers the caller registers. River's tables are
// created by store.Migrate on PostgreSQL.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/lib/pq"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/store"
)

// DefaultQueue is the queue benchmark jobs go to when a repository names
// none; ControlQueue holds the quick jobs perfbot serve works itself
// (talking to GitHub), so that a webhook is answered without waiting on
// GitHub's API.
const (
	DefaultQueue = "gpu"
	ControlQueue = "control"
)

// Job kinds, as stored in River's river_job.kind.
const (
	KindCompare  = "perfbot_compare"
	KindBaseline = "perfbot_baseline"
	KindBisect   = "perfbot_bisect"
	KindCommand  = "perfbot_command"
	KindNotify   = "perfbot_notify"
)

// CompareArgs asks a worker to compare a pull request's head against its
// base and report on the pull request.
type CompareArgs struct {
	Repo    string `json:"repo" river:"unique"` // owner/name
	PR      int    `json:"pr" river:"unique"`
	HeadSHA string `json:"head_sha" river:"unique"`
	BaseSHA string `json:"base_sha"`
	// CloneURL is where the worker mirrors the repository from.
	CloneURL string `json:"clone_url"`
	// Count overrides the config's runs per side (/perfbot run count=N);
	// 0 keeps it.
	Count int `json:"count,omitempty"`
	// Trigger says what asked for it: a webhook action ("synchronize")
	// or "command" (a maintainer's /perfbot run).
	Trigger   string `json:"trigger"`
	Requester string `json:"requester,omitempty"`
	// UpdatedAt is the pull request's updated_at when GitHub sent the
	// event (or when serve read it, for /perfbot run): of two heads of one
	// pull request the later is the newer, and the newer wins
	// (InsertCompare). Zero means the moment of the insert.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Kind implements river.JobArgs.
func (CompareArgs) Kind() string { return KindCompare }

// BaselineArgs asks a worker to store baseline runs of one commit of the
// default branch.
type BaselineArgs struct {
	Repo     string `json:"repo" river:"unique"`
	SHA      string `json:"sha" river:"unique"`
	CloneURL string `json:"clone_url"`
}

// Kind implements river.JobArgs.
func (BaselineArgs) Kind() string { return KindBaseline }

// BisectArgs asks a worker to find the first commit between Good and Bad
// that made Phase slower, answering on pull request PR.
type BisectArgs struct {
	Repo      string `json:"repo" river:"unique"`
	PR        int    `json:"pr" river:"unique"`
	Good      string `json:"good" river:"unique"`
	Bad       string `json:"bad" river:"unique"`
	Phase     string `json:"phase,omitempty" river:"unique"`
	CloneURL  string `json:"clone_url"`
	Requester string `json:"requester,omitempty"`
}

// Kind implements river.JobArgs.
func (BisectArgs) Kind() string { return KindBisect }

// CommandArgs is a maintainer's /perfbot run on a pull request: perfbot
// serve looks up the pull request's base and head, then queues a
// CompareArgs on Queue.
type CommandArgs struct {
	Repo      string `json:"repo"`
	PR        int    `json:"pr"`
	Count     int    `json:"count,omitempty"`
	CloneURL  string `json:"clone_url,omitempty"` // "" = the pull request's base repository
	Queue     string `json:"queue"`
	Requester string `json:"requester"`
	Delivery  string `json:"delivery" river:"unique"`
}

// Kind implements river.JobArgs.
func (CommandArgs) Kind() string { return KindCommand }

// NotifyArgs is a message for a pull request: a reply comment, and/or a
// queued check on a commit.
type NotifyArgs struct {
	Repo string `json:"repo"`
	PR   int    `json:"pr"`
	// Reply, when set, is posted as perfbot's comment answering ReplyKey
	// (the delivery or command it answers): found by its marker and
	// edited, so that a retried job never posts it twice. A job without a
	// key (queued before keys existed) answers under its own job id.
	Reply    string `json:"reply,omitempty"`
	ReplyKey string `json:"reply_key,omitempty"`
	// SupersededBy, when set, ends CheckSHA's check neutral, superseded
	// by that newer head (unless its comparison finished first); Closed
	// ends it neutral because the pull request was closed.
	SupersededBy string `json:"superseded_by,omitempty"`
	Closed       bool   `json:"closed,omitempty"`
	// CheckSHA, when set, gets perfbot's check set to queued with
	// CheckTitle.
	CheckSHA   string `json:"check_sha,omitempty"`
	CheckTitle string `json:"check_title,omitempty"`
	// Comparison, when set, publishes that stored comparison (its summary
	// comment and completed check on CheckSHA): a retry for a worker
	// that measured but could not reach GitHub.
	Comparison int64 `json:"comparison,omitempty"`
}

// Kind implements river.JobArgs.
func (NotifyArgs) Kind() string { return KindNotify }

// liveStates are the states in which a job counts as queued or running:
// River's unique states minus completed (so that /perfbot run may measure
// a head again once its last job finished) and retryable.
var liveStates = []rivertype.JobState{
	rivertype.JobStateAvailable,
	rivertype.JobStatePending,
	rivertype.JobStateRunning,
	rivertype.JobStateScheduled,
}

// Config configures a Client.
type Config struct {
	// Queues maps the queues this client works to how many jobs of each it
	// runs at once; nil inserts only. A GPU host runs one at a time: two
	// benchmarks at once would measure each other.
	Queues map[string]int
	// Workers are the job handlers (river.AddWorker); required with Queues.
	Workers *river.Workers
	// JobTimeout bounds one job; after it the job's context is cancelled.
	// Default 2 hours.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before another
	// worker takes it as abandoned (its worker was killed) and runs it
	// again; it must exceed JobTimeout. Default JobTimeout + 10 minutes.
	RescueAfter time.Duration
	// MaxAttempts is how many times a failing job is tried; default 3.
	MaxAttempts int
	// PollInterval is how often an idle worker looks for jobs (River's
	// database/sql driver cannot LISTEN); default 2 seconds.
	PollInterval time.Duration
	Logger       *slog.Logger
}

// A Client inserts and (with Queues) works perfbot's jobs.
type Client struct {
	River *river.Client[*sql.Tx]
	db    *store.DB
	cfg   Config
}

// New returns a client over db, which must be PostgreSQL: River needs it.
func New(db *store.DB, cfg Config) (*Client, error) {
	if db.Driver() != store.DriverPostgres {
		return nil, fmt.Errorf("job queue: %s is SQLite; perfbot serve and perfbot worker share jobs through PostgreSQL: pass --db postgres://… (perfbot compare and perfbot pr work without it)", db)
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = 2 * time.Hour
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = cfg.JobTimeout + 10*time.Minute
	}
	if cfg.RescueAfter <= cfg.JobTimeout {
		return nil, fmt.Errorf("job queue: rescue-after %s must be longer than the job timeout %s", cfg.RescueAfter, cfg.JobTimeout)
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 2 * time.Second
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rc := &river.Config{
		Logger:               logger,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		MaxAttempts:          cfg.MaxAttempts,
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        min(cfg.PollInterval, 100*time.Millisecond),
		PollOnly:             true,
		// perfbot serve inserts jobs that only workers on GPU hosts
		// know how to work.
		SkipUnknownJobCheck: true,
	}
	if len(cfg.Queues) > 0 {
		if cfg.Workers == nil {
			return nil, errors.New("job queue: queues to work but no workers registered")
		}
		rc.Queues = make(map[string]river.QueueConfig, len(cfg.Queues))
		for q, n := range cfg.Queues {
			rc.Queues[q] = river.QueueConfig{MaxWorkers: max(1, n)}
		}
		rc.Workers = cfg.Workers
	}
	rcl, err := river.NewClient(riverdatabasesql.New(db.SQL()), rc)
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	return &Client{River: rcl, db: db, cfg: cfg}, nil
}

// An Inserted is the outcome of an insert.
type Inserted struct {
	ID int64
	// Duplicate means a live job for the same key already existed; ID is
	// that job's.
	Duplicate bool
	// Cancelled lists jobs for an older head of the same pull request
	// that this insert cancelled: comparisons, and the notes that would
	// have set their checks to queued.
	Cancelled []int64
	// Superseded is set, and nothing inserted, when a newer head of the
	// pull request has been queued already: Newer is that head.
	Superseded bool
	Newer      string
}

// A Tx inserts jobs inside one transaction of the database (Client.InTx):
// they are queued together when it commits, and none is when it rolls
// back. Its methods are the Client's, with the same meaning.
type Tx struct {
	c  *Client
	tx *sql.Tx
}

// InTx runs fn in a transaction and commits it if fn returns nil; when fn
// fails, or the commit does, nothing fn did is kept. A webhook delivery
// records its id and queues its jobs in one InTx, so that an error always
// means "nothing happened, redeliver".
func (c *Client) InTx(ctx context.Context, fn func(*Tx) error) error {
	tx, err := c.db.SQL().BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("job queue: begin a transaction: %w", err)
	}
	if err := fn(&Tx{c: c, tx: tx}); err != nil {
		_ = tx.Rollback() // fn's error says what went wrong; a failed rollback leaves nothing committed either
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("job queue: commit: %w", err)
	}
	return nil
}

// FirstSeen records a webhook delivery id in the transaction and reports
// whether it was new (store.DB.FirstSeenTx).
func (t *Tx) FirstSeen(ctx context.Context, id string) (bool, error) {
	return t.c.db.FirstSeenTx(ctx, t.tx, id)
}

// InsertCompare queues a comparison of a pull request's head on queue
// ("" = DefaultQueue), if that head is the pull request's newest: the
// one with the latest UpdatedAt, the larger SHA breaking a tie. Live jobs
// of the same pull request for other heads are cancelled first (a queued
// one never runs, a running one has its context cancelled: workers poll
// for that every two seconds), with the notes that would set their checks
// to queued. A head older than one already queued inserts nothing
// (Inserted.Superseded). A live job for the same head is not duplicated.
// The cancels and the insert commit together.
//
// The pull request's row in pull_heads is upserted first and stays locked
// until the transaction ends, so inserts for one pull request run one
// after another however many deliveries arrive at once, and each sees
// the jobs the one before it committed.
func (c *Client) InsertCompare(ctx context.Context, queue string, args CompareArgs) (Inserted, error) {
	var ins Inserted
	err := c.InTx(ctx, func(t *Tx) (err error) {
		ins, err = t.InsertCompare(ctx, queue, args)
		return err
	})
	return ins, err
}

// InsertCompare is Client.InsertCompare in the transaction.
func (t *Tx) InsertCompare(ctx context.Context, queue string, args CompareArgs) (Inserted, error) {
	if args.UpdatedAt.IsZero() {
		args.UpdatedAt = time.Now()
	}
	args.UpdatedAt = args.UpdatedAt.UTC()
	newer, err := t.claimHead(ctx, args)
	if err != nil {
		return Inserted{}, err
	}
	if newer != "" {
		return Inserted{Superseded: true, Newer: newer}, nil
	}
	cancelled, heads, err := t.cancelSuperseded(ctx, args)
	if err != nil {
		return Inserted{}, err
	}
	// The checks of the heads whose comparisons were cancelled end,
	// naming this one: a "Queued" check left on them would stay forever.
	for _, h := range heads {
		if err := t.InsertNotify(ctx, NotifyArgs{Repo: args.Repo, PR: args.PR, CheckSHA: h, SupersededBy: args.HeadSHA}); err != nil {
			return Inserted{}, err
		}
	}
	res, err := t.c.River.InsertTx(ctx, t.tx, args, t.c.insertOpts(queue))
	if err != nil {
		return Inserted{}, fmt.Errorf("queue comparison of %s#%d at %s: %w", args.Repo, args.PR, short(args.HeadSHA), err)
	}
	return Inserted{ID: res.Job.ID, Duplicate: res.UniqueSkippedAsDuplicate, Cancelled: cancelled}, nil
}

// InsertBaseline queues baseline runs of a commit.
func (c *Client) InsertBaseline(ctx context.Context, queue string, args BaselineArgs) (Inserted, error) {
	var ins Inserted
	err := c.InTx(ctx, func(t *Tx) (err error) {
		ins, err = t.InsertBaseline(ctx, queue, args)
		return err
	})
	return ins, err
}

// InsertBaseline is Client.InsertBaseline in the transaction.
func (t *Tx) InsertBaseline(ctx context.Context, queue string, args BaselineArgs) (Inserted, error) {
	res, err := t.c.River.InsertTx(ctx, t.tx, args, t.c.insertOpts(queue))
	if err != nil {
		return Inserted{}, fmt.Errorf("queue baseline of %s at %s: %w", args.Repo, short(args.SHA), err)
	}
	return Inserted{ID: res.Job.ID, Duplicate: res.UniqueSkippedAsDuplicate}, nil
}

// InsertBisect queues a bisection.
func (c *Client) InsertBisect(ctx context.Context, queue string, args BisectArgs) (Inserted, error) {
	var ins Inserted
	err := c.InTx(ctx, func(t *Tx) (err error) {
		ins, err = t.InsertBisect(ctx, queue, args)
		return err
	})
	return ins, err
}

// InsertBisect is Client.InsertBisect in the transaction.
func (t *Tx) InsertBisect(ctx context.Context, queue string, args BisectArgs) (Inserted, error) {
	res, err := t.c.River.InsertTx(ctx, t.tx, args, t.c.insertOpts(queue))
	if err != nil {
		return Inserted{}, fmt.Errorf("queue bisect of %s %s..%s: %w", args.Repo, args.Good, args.Bad, err)
	}
	return Inserted{ID: res.Job.ID, Duplicate: res.UniqueSkippedAsDuplicate}, nil
}

// InsertCommand queues a /perfbot run for perfbot serve to resolve.
func (c *Client) InsertCommand(ctx context.Context, args CommandArgs) (Inserted, error) {
	var ins Inserted
	err := c.InTx(ctx, func(t *Tx) (err error) {
		ins, err = t.InsertCommand(ctx, args)
		return err
	})
	return ins, err
}

// InsertCommand is Client.InsertCommand in the transaction.
func (t *Tx) InsertCommand(ctx context.Context, args CommandArgs) (Inserted, error) {
	res, err := t.c.River.InsertTx(ctx, t.tx, args, t.c.insertOpts(ControlQueue))
	if err != nil {
		return Inserted{}, fmt.Errorf("queue /perfbot run on %s#%d: %w", args.Repo, args.PR, err)
	}
	return Inserted{ID: res.Job.ID, Duplicate: res.UniqueSkippedAsDuplicate}, nil
}

// publishAttempts is how often publishing a stored result is tried: with
// River's backoff (attempt⁴ seconds) ten attempts span about three hours
// of a GitHub outage.
const publishAttempts = 10

// InsertNotify queues a message for a pull request.
func (c *Client) InsertNotify(ctx context.Context, args NotifyArgs) error {
	return c.InTx(ctx, func(t *Tx) error { return t.InsertNotify(ctx, args) })
}

// InsertNotify is Client.InsertNotify in the transaction.
func (t *Tx) InsertNotify(ctx context.Context, args NotifyArgs) error {
	opts := t.c.insertOpts(ControlQueue)
	opts.UniqueOpts = river.UniqueOpts{}
	if args.Comparison != 0 {
		opts.MaxAttempts = publishAttempts
	}
	if _, err := t.c.River.InsertTx(ctx, t.tx, args, opts); err != nil {
		return fmt.Errorf("queue a message for %s#%d: %w", args.Repo, args.PR, err)
	}
	return nil
}

func (c *Client) insertOpts(queue string) *river.InsertOpts {
	if queue == "" {
		queue = DefaultQueue
	}
	return &river.InsertOpts{
		Queue:       queue,
		MaxAttempts: c.cfg.MaxAttempts,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: liveStates},
	}
}

// claimHead records args's head as its pull request's newest unless a
// newer one is recorded, and returns that newer head ("" when args's is
// the newest, or the same head again). The upsert locks the pull
// request's row until the transaction ends; a concurrent insert for the
// same pull request waits on it, then sees what this one committed.
func (t *Tx) claimHead(ctx context.Context, args CompareArgs) (string, error) {
	var head string
	err := t.tx.QueryRowContext(ctx, `
		INSERT INTO pull_heads AS p (repo, pr, head_sha, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (repo, pr) DO UPDATE SET head_sha = excluded.head_sha, updated_at = excluded.updated_at
		WHERE (excluded.updated_at, excluded.head_sha) >= (p.updated_at, p.head_sha)
		RETURNING head_sha`, args.Repo, args.PR, args.HeadSHA, args.UpdatedAt).Scan(&head)
	if err == nil {
		return "", nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("record the head of %s#%d (%s): %w", args.Repo, args.PR, short(args.HeadSHA), err)
	}
	// The row is newer and now locked by this transaction: read it.
	if err := t.tx.QueryRowContext(ctx, `SELECT head_sha FROM pull_heads WHERE repo = $1 AND pr = $2`,
		args.Repo, args.PR).Scan(&head); err != nil {
		return "", fmt.Errorf("read the newest head of %s#%d: %w", args.Repo, args.PR, err)
	}
	return head, nil
}

// The queries below find one pull request's jobs through the expression
// indexes store.Migrate makes on river_job (perfbot_compare_by_pr,
// perfbot_notify_by_pr), not a scan of the queue: their kind is a literal
// so that the planner can use the partial indexes.
const (
	supersededCompares = `SELECT id, args->>'head_sha' FROM river_job
		WHERE kind = 'perfbot_compare' AND args->>'repo' = $1 AND (args->>'pr')::bigint = $2
		AND args->>'head_sha' <> $3
		AND state IN ('available', 'pending', 'running', 'scheduled', 'retryable')
		ORDER BY id`
	supersededNotes = `SELECT id, args->>'check_sha' FROM river_job
		WHERE kind = 'perfbot_notify' AND args->>'repo' = $1 AND (args->>'pr')::bigint = $2
		AND args->>'check_sha' <> $3 AND coalesce(args->>'reply', '') = '' AND args->'comparison' IS NULL
		AND coalesce(args->>'superseded_by', '') = '' AND coalesce(args->>'closed', 'false') = 'false'
		AND state IN ('available', 'pending', 'scheduled', 'retryable')
		ORDER BY id`
	droppedCompare = `SELECT EXISTS (SELECT 1 FROM river_job
		WHERE kind = 'perfbot_compare' AND args->>'repo' = $1 AND (args->>'pr')::bigint = $2
		AND args->>'head_sha' = $3 AND state = 'cancelled')
		AND NOT EXISTS (SELECT 1 FROM river_job
		WHERE kind = 'perfbot_compare' AND args->>'repo' = $1 AND (args->>'pr')::bigint = $2
		AND args->>'head_sha' = $3 AND state <> 'cancelled')`
	finishedCompare = `SELECT EXISTS (SELECT 1 FROM river_job
		WHERE kind = 'perfbot_compare' AND args->>'repo' = $1 AND (args->>'pr')::bigint = $2
		AND args->>'head_sha' = $3 AND state = 'completed')`
	waitingCompare = `SELECT EXISTS (SELECT 1 FROM river_job
		WHERE kind = 'perfbot_compare' AND args->>'repo' = $1 AND (args->>'pr')::bigint = $2
		AND args->>'head_sha' = $3
		AND state IN ('available', 'pending', 'scheduled', 'retryable'))`
)

// IndexedQueries returns the queries that find one pull request's jobs,
// each with the index it is meant to use (for tests and docs/server.md's
// plans). Each takes the repository, the pull request's number and a head.
func IndexedQueries() map[string]string {
	return map[string]string{
		supersededCompares: "perfbot_compare_by_pr",
		supersededNotes:    "perfbot_notify_by_pr",
		waitingCompare:     "perfbot_compare_by_pr",
		finishedCompare:    "perfbot_compare_by_pr",
		droppedCompare:     "perfbot_compare_by_pr",
	}
}

// cancelSuperseded cancels the live compare jobs of args's pull request
// whose head is not args.HeadSHA, and the notes that would set those
// heads' checks to queued; it returns the jobs it cancelled and the heads
// of the cancelled comparisons, each once.
func (t *Tx) cancelSuperseded(ctx context.Context, args CompareArgs) (ids []int64, heads []string, err error) {
	return t.cancelJobs(ctx, fmt.Sprintf("superseded by %s", short(args.HeadSHA)), args.Repo, args.PR, args.HeadSHA)
}

// cancelJobs cancels the live compare jobs and queued-check notes of a
// pull request whose head is not except ("" for every head), and returns
// them and the cancelled comparisons' heads, each once.
func (t *Tx) cancelJobs(ctx context.Context, why, repo string, pr int, except string) (ids []int64, heads []string, err error) {
	for i, q := range []string{supersededCompares, supersededNotes} {
		found, shas, err := t.idsAndSHAs(ctx, q, repo, pr, except)
		if err != nil {
			return ids, heads, fmt.Errorf("find jobs of %s#%d (%s): %w", repo, pr, why, err)
		}
		for j, id := range found {
			if _, err := t.c.River.JobCancelTx(ctx, t.tx, id); err != nil {
				return ids, heads, fmt.Errorf("cancel job %d (%s): %w", id, why, err)
			}
			ids = append(ids, id)
			if i == 0 && !slices.Contains(heads, shas[j]) {
				heads = append(heads, shas[j])
			}
		}
	}
	return ids, heads, nil
}

// ClosePullRequest cancels every live comparison of a closed pull request
// and the notes that would set checks to queued, and queues the notes that
// end those heads' checks, neutral: "Pull request closed". It returns the
// heads.
func (c *Client) ClosePullRequest(ctx context.Context, repo string, pr int) ([]string, error) {
	var heads []string
	err := c.InTx(ctx, func(t *Tx) (err error) {
		heads, err = t.ClosePullRequest(ctx, repo, pr)
		return err
	})
	return heads, err
}

// ClosePullRequest is Client.ClosePullRequest in the transaction.
func (t *Tx) ClosePullRequest(ctx context.Context, repo string, pr int) ([]string, error) {
	_, heads, err := t.cancelJobs(ctx, "pull request closed", repo, pr, "")
	if err != nil {
		return nil, err
	}
	for _, h := range heads {
		if err := t.InsertNotify(ctx, NotifyArgs{Repo: repo, PR: pr, CheckSHA: h, Closed: true}); err != nil {
			return nil, err
		}
	}
	return heads, nil
}

// ControlKinds are the kinds of the control queue's short jobs (a few
// GitHub calls each): RescueControl rescues them.
var ControlKinds = []string{KindNotify, KindCommand}

// RescueControl makes the control jobs that have been running for longer
// than after retryable again (discarded when they have no attempt left),
// as River's rescuer does for every kind after RescueAfter: a control
// job runs for seconds and River cancels it at its timeout, so one still
// "running" well past that lost its process (perfbot serve killed), and
// waiting hours for the rescuer, which must spare measuring jobs, would
// leave a queued check or a reply that long. It returns how many it
// rescued.
func (c *Client) RescueControl(ctx context.Context, after time.Duration) (int, error) {
	res, err := c.db.SQL().ExecContext(ctx, `
		UPDATE river_job SET
			state = CASE WHEN attempt >= max_attempts THEN 'discarded'::river_job_state ELSE 'retryable'::river_job_state END,
			finalized_at = CASE WHEN attempt >= max_attempts THEN now() END,
			scheduled_at = now(),
			errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt,
				'error', 'perfbot: control job rescued: still running long after its timeout (its process is gone)', 'trace', ''))
		WHERE state = 'running' AND kind = ANY($1) AND attempted_at < now() - make_interval(secs => $2)`,
		pq.Array(ControlKinds), after.Seconds())
	if err != nil {
		return 0, fmt.Errorf("rescue control jobs: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// Finished reports whether the comparison of head of the pull request
// completed (and so published its own check).
func (c *Client) Finished(ctx context.Context, repo string, pr int, head string) (bool, error) {
	var done bool
	if err := c.db.SQL().QueryRowContext(ctx, finishedCompare, repo, pr, head).Scan(&done); err != nil {
		return false, fmt.Errorf("find the finished comparison of %s#%d at %s: %w", repo, pr, short(head), err)
	}
	return done, nil
}

// Dropped reports whether every comparison of head of the pull request
// was cancelled (by a newer push, or the pull request closing), and none
// is queued, running or done.
func (c *Client) Dropped(ctx context.Context, repo string, pr int, head string) (bool, error) {
	var dropped bool
	if err := c.db.SQL().QueryRowContext(ctx, droppedCompare, repo, pr, head).Scan(&dropped); err != nil {
		return false, fmt.Errorf("find the dropped comparison of %s#%d at %s: %w", repo, pr, short(head), err)
	}
	return dropped, nil
}

// NewestHead returns the newest head queued for the pull request ("" when
// none was).
func (c *Client) NewestHead(ctx context.Context, repo string, pr int) (string, error) {
	var head string
	err := c.db.SQL().QueryRowContext(ctx, `SELECT head_sha FROM pull_heads WHERE repo = $1 AND pr = $2`, repo, pr).Scan(&head)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the newest head of %s#%d: %w", repo, pr, err)
	}
	return head, nil
}

func (t *Tx) idsAndSHAs(ctx context.Context, query string, args ...any) ([]int64, []string, error) {
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var ids []int64
	var shas []string
	for rows.Next() {
		var id int64
		var sha sql.NullString
		if err := rows.Scan(&id, &sha); err != nil {
			return nil, nil, err
		}
		ids, shas = append(ids, id), append(shas, sha.String)
	}
	return ids, shas, rows.Err()
}

// Waiting reports whether a comparison of repo#pr at head is queued and
// not yet started.
func (c *Client) Waiting(ctx context.Context, repo string, pr int, head string) (bool, error) {
	var waiting bool
	if err := c.db.SQL().QueryRowContext(ctx, waitingCompare, repo, pr, head).Scan(&waiting); err != nil {
		return false, fmt.Errorf("find the queued comparison of %s#%d at %s: %w", repo, pr, short(head), err)
	}
	return waiting, nil
}

// Start starts working the configured queues until ctx ends or Stop.
func (c *Client) Start(ctx context.Context) error { return c.River.Start(ctx) }

// Stop stops fetching jobs and waits for running ones to finish, or for
// ctx to end (then their contexts are cancelled).
func (c *Client) Stop(ctx context.Context) error {
	err := c.River.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return c.River.StopAndCancel(context.WithoutCancel(ctx))
	}
	return err
}

// Counts returns how many jobs of each kind are in each state, for
// /metrics.
func Counts(ctx context.Context, db *sql.DB) (map[[2]string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT kind, state::text, count(*) FROM river_job GROUP BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]int{}
	for rows.Next() {
		var kind, state string
		var n int
		if err := rows.Scan(&kind, &state, &n); err != nil {
			return nil, fmt.Errorf("count jobs: %w", err)
		}
		out[[2]string{kind, state}] = n
	}
	return out, rows.Err()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
