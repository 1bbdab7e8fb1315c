package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/perfbot/perfbot/analysis"
)

// History returns, for each key, its values in the newest q.Limit ok
// timed baseline runs of q.Repo (all of them when q.Limit <= 0; runs
// under a tool such as callgrind are not noise history), oldest first,
// one value per run (the median when a run has several). Keys none of
// those runs has are absent. analysis derives the noise floor from the
// changes between consecutive values; set q.Machine and q.ConfigHash so
// that they compare like with like.
func (db *DB) History(ctx context.Context, q HistoryQuery) (map[analysis.Key][]float64, error) {
	// The runs first, newest first through runs_repo_kind_time and
	// limited, then only their samples: two small queries whose plans do
	// not depend on table statistics.
	var f filter
	f.add("p.name = ?", q.Repo)
	f.add("r.kind = ?", string(KindBaseline))
	f.add("r.status = ?", string(analysis.StatusOK))
	f.add("r.tool = ''")
	f.addWhole(0)
	if q.Machine != "" {
		f.add("r.machine = ?", q.Machine)
	}
	if q.ConfigHash != "" {
		f.add("r.config_hash = ?", q.ConfigHash)
	}
	query := `SELECT r.id FROM runs r JOIN repos p ON p.id = r.repo_id` + f.where() + ` ORDER BY r.started_at DESC, r.id DESC`
	args := f.args
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	var ids []int64
	if err := db.db.SelectContext(ctx, &ids, db.db.Rebind(query), args...); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	slices.Reverse(ids)
	pos := make(map[int64]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}

	// perRun[k][i] holds key k's values in run ids[i].
	perRun := make(map[analysis.Key][][]float64)
	err := db.eachSample(ctx, ids, q.Keys, func(id int64, s analysis.Sample) {
		vals := perRun[s.Key]
		if vals == nil {
			vals = make([][]float64, len(ids))
			perRun[s.Key] = vals
		}
		i := pos[id]
		vals[i] = append(vals[i], s.Value)
	})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	hist := make(map[analysis.Key][]float64, len(perRun))
	for k, runs := range perRun {
		vals := make([]float64, 0, len(runs))
		for _, v := range runs {
			if len(v) > 0 {
				vals = append(vals, median(v))
			}
		}
		hist[k] = vals
	}
	return hist, nil
}

// Trend returns one key's value in every ok baseline run of repo that
// started at or after since (a zero since: every run), oldest first, one
// point per run (the median when a run has several values). Runs of all
// machines and configurations are included; TrendPoint.Machine tells them
// apart.
func (db *DB) Trend(ctx context.Context, repo string, key analysis.Key, since time.Time) ([]TrendPoint, error) {
	if since.IsZero() {
		since = time.Unix(0, 0) // a zero time is stored as NULL, and NULL compares as nothing
	}
	rows, err := db.db.QueryContext(ctx, db.db.Rebind(`
		SELECT r.id, r.commit_sha, r.machine, r.started_at, s.value
		FROM runs r
		JOIN repos p ON p.id = r.repo_id
		JOIN samples s ON s.run_id = r.id
		WHERE p.name = ? AND r.kind = ? AND r.status = ? AND r.started_at >= ?
		  AND s.benchmark = ? AND s.phase = ? AND s.unit = ?
		ORDER BY r.started_at, r.id`),
		repo, string(KindBaseline), string(analysis.StatusOK), dbTime{since},
		key.Benchmark, key.Phase, key.Unit)
	if err != nil {
		return nil, fmt.Errorf("trend: %w", err)
	}
	defer rows.Close()

	var (
		points []TrendPoint
		vals   []float64
	)
	flush := func() {
		if len(vals) > 0 {
			points[len(points)-1].Value = median(vals)
			vals = vals[:0]
		}
	}
	for rows.Next() {
		var (
			p       TrendPoint
			started dbTime
			v       float64
		)
		if err := rows.Scan(&p.RunID, &p.Commit, &p.Machine, &started, &v); err != nil {
			return nil, fmt.Errorf("trend: %w", err)
		}
		if len(points) == 0 || points[len(points)-1].RunID != p.RunID {
			flush()
			p.StartedAt = started.Time
			points = append(points, p)
		}
		vals = append(vals, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trend: %w", err)
	}
	flush()
	return points, nil
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
