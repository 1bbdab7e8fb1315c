// Package dashboard is perfbot serve's web dashboard: server-rendered
// pages (html/template, assets embedded, nothing loaded from the
// network) and a JSON endpoint behind each.
//
// In flow HTTP GET requests; out flow pages and JSON built from the
// store's baseline runs and comparisons (trends through
// analysis.NewTrend, charts through chart.Trend, comparisons through
// analysis.Compare) and from the job queue. It measures nothing and
// writes nothing.
//
// Pages and their data:
//
//	/                       index of series         /api/series
//	/trend?repo&benchmark&phase&unit[&since&machine] /api/trend
//	/trend.svg, /trend.png (same query)              the chart as perfbot trend draws it
//	/phases?repo&benchmark[&unit&since&machine]      /api/phases
//	/compare?repo&base&head or ?id                   /api/compare
//	/change?repo&benchmark&phase&unit&at[&since&machine] /api/change
//	/commit?repo&sha                                 /api/commit
//	/jobs                                            /api/jobs
package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/chart"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// Store is the part of the store the dashboard reads.
type Store interface {
	TrendSeries(ctx context.Context) ([]store.Series, error)
	Trend(ctx context.Context, repo string, key analysis.Key, since time.Time) ([]store.TrendPoint, error)
	Runs(ctx context.Context, q store.RunQuery) ([]store.RunRecord, error)
	History(ctx context.Context, q store.HistoryQuery) (map[analysis.Key][]float64, error)
	Comparison(ctx context.Context, id int64) (*store.Comparison, error)
	PairComparisons(ctx context.Context, repo, base, head string) ([]store.Comparison, error)
	CommitComparisons(ctx context.Context, repo, sha string, limit int) ([]store.Comparison, error)
	ResolveCommit(ctx context.Context, repo, prefix string) (string, error)
	RecentComparisons(ctx context.Context, limit int) ([]store.Comparison, error)
	RecentHeadlines(ctx context.Context, runs int, unit string) ([]store.HeadlinePoint, error)
	RunsVersion(ctx context.Context) (store.RunsVersion, error)
	Commits(ctx context.Context, repo string, shas []string) (map[string]store.Commit, error)
}

var _ Store = (*store.DB)(nil)

// Config is what New needs.
type Config struct {
	Store Store
	// Jobs lists the newest jobs of the queue; nil when there is no
	// queue (SQLite), and the jobs page says so.
	Jobs func(ctx context.Context, limit int) ([]queue.Job, error)
	// Queues says how each queue is served (queue.Statuses), for the
	// jobs page's warning about a queue no worker serves; nil: no
	// warning.
	Queues func(ctx context.Context) ([]queue.QueueStatus, error)
	// JobTimeout is how long a job may take (perfbot serve's
	// job_timeout; 0: its default): a queue whose jobs wait longer while
	// no worker starts any is warned about.
	JobTimeout time.Duration
	// Now returns the current time (nil: time.Now), for --since windows.
	Now    func() time.Time
	Logger *slog.Logger
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// A Dashboard serves the pages. It is an http.Handler.
type Dashboard struct {
	cfg   Config
	pages map[string]*template.Template
	mux   *http.ServeMux

	cacheMu sync.Mutex
	cache   *seriesView // the front page's view of the runs, by version
}

// New returns the dashboard's handler. Register it at "/" of a mux: it
// answers its own paths (see the package comment) and 404 elsewhere.
func New(cfg Config) *Dashboard {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Dashboard{cfg: cfg, pages: map[string]*template.Template{}, mux: http.NewServeMux()}
	for _, p := range []string{"index", "trend", "phases", "compare", "change", "commit", "jobs"} {
		d.pages[p] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/report.html", "templates/"+p+".html"))
	}
	static, _ := fs.Sub(staticFS, "static")
	d.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	d.route("/{$}", "index", d.index)
	d.route("/trend", "trend", d.trend)
	d.mux.HandleFunc("GET /trend.svg", d.trendImage(chart.SVG))
	d.mux.HandleFunc("GET /trend.png", d.trendImage(chart.PNG))
	d.route("/phases", "phases", d.phases)
	d.route("/compare", "compare", d.compare)
	d.route("/change", "change", d.change)
	d.route("/commit", "commit", d.commit)
	d.route("/jobs", "jobs", d.jobs)
	return d
}

// ServeHTTP implements http.Handler.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.mux.ServeHTTP(w, r) }

// trendImage serves a trend's chart as perfbot trend --format svg|png
// draws it (chart.Trend), for saving or embedding elsewhere.
func (d *Dashboard) trendImage(format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, _, err := d.requestTrend(r)
		if err != nil {
			d.fail(w, r, err, false)
			return
		}
		var buf bytes.Buffer
		if err := chart.Trend(&buf, t, chart.Options{Format: format, Width: 1400, Height: 700}); err != nil {
			d.fail(w, r, fmt.Errorf("draw trend: %w", err), false)
			return
		}
		w.Header().Set("Content-Type", map[string]string{chart.SVG: "image/svg+xml", chart.PNG: "image/png"}[format])
		w.Write(buf.Bytes())
	}
}

// A loader builds one page's data from a request; errors of kind
// *requestError are the client's.
type loader func(r *http.Request) (any, error)

// route serves a page at path and its data as JSON at /api/path (the
// index's at /api/series).
func (d *Dashboard) route(path, page string, load loader) {
	api := "/api" + path
	if page == "index" {
		api = "/api/series"
	}
	d.mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
		data, err := load(r)
		if err != nil {
			d.fail(w, r, err, false)
			return
		}
		var buf bytes.Buffer
		if err := d.pages[page].Execute(&buf, data); err != nil {
			d.fail(w, r, fmt.Errorf("render %s page: %w", page, err), false)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(buf.Bytes())
	})
	d.mux.HandleFunc("GET "+api, func(w http.ResponseWriter, r *http.Request) {
		data, err := load(r)
		if err != nil {
			d.fail(w, r, err, true)
			return
		}
		b, err := json.MarshalIndent(data, "", "  ")
		if err != nil {
			d.fail(w, r, fmt.Errorf("encode %s data: %w", page, err), true)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(b, '\n'))
	})
}

// A requestError is a bad request (400) or a missing record (404),
// with a message that says what to do.
type requestError struct {
	code int
	msg  string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &requestError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &requestError{code: http.StatusNotFound, msg: fmt.Sprintf(format, args...)}
}

// fail answers an error: the client's with its code and message, any
// other with 500 and a log line.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, err error, asJSON bool) {
	code, msg := http.StatusInternalServerError, "internal error: see perfbot serve's log"
	var re *requestError
	if errors.As(err, &re) {
		code, msg = re.code, re.msg
	} else {
		d.cfg.Logger.Error("dashboard", "path", r.URL.Path, "err", err)
	}
	if asJSON {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		b, _ := json.Marshal(map[string]string{"error": msg})
		w.Write(append(b, '\n'))
		return
	}
	var buf bytes.Buffer
	if terr := d.pages["index"].ExecuteTemplate(&buf, "error", map[string]any{"Code": code, "Status": http.StatusText(code), "Message": msg}); terr != nil {
		http.Error(w, msg, code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}
