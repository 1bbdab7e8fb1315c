package server

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are what /metrics shows. Webhooks and job durations are counted
// by the process that saw them; jobs by state and comparisons by verdict
// are read from the shared database at scrape time, so every perfbot serve
// shows the whole fleet's.
type Metrics struct {
	Registry    *prometheus.Registry
	webhooks    *prometheus.CounterVec
	jobDuration *prometheus.HistogramVec
}

// Counts are the database-backed figures; either function may be nil.
type Counts struct {
	// Jobs returns job counts by (kind, state).
	Jobs func(context.Context) (map[[2]string]int, error)
	// Comparisons returns stored comparisons by verdict.
	Comparisons func(context.Context) (map[string]int64, error)
	// Pool, when set, is the process's connection pool to the database,
	// shown as go_sql_*{db_name="perfbot"}: its limit, the connections
	// open, in use and idle, the waits for one, and those closed beyond
	// the idle limit or past their idle time or lifetime (a count that
	// climbs with the deliveries means the pool is too small).
	Pool *sql.DB
}

// NewMetrics registers perfbot's metrics, Go's runtime metrics and the
// database-backed counts in a new registry.
func NewMetrics(counts Counts, log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfbot_webhooks_total",
			Help: "Webhook deliveries received, by event and outcome (accepted, ignored, duplicate, bad_signature, bad_request, too_large, error).",
		}, []string{"event", "outcome"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "perfbot_job_duration_seconds",
			Help: "Wall time of jobs this process worked, by kind and outcome (ok, error, cancelled).",
			// Control jobs take milliseconds; comparisons take minutes to hours.
			Buckets: []float64{0.01, 0.1, 1, 10, 60, 300, 900, 1800, 3600, 7200},
		}, []string{"kind", "outcome"}),
	}
	m.Registry.MustRegister(m.webhooks, m.jobDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&dbCollector{counts: counts, log: log})
	if counts.Pool != nil {
		m.Registry.MustRegister(collectors.NewDBStatsCollector(counts.Pool, "perfbot"))
	}
	return m
}

// ObserveWebhook counts one webhook delivery (the webhook Handler's
// Observe hook).
func (m *Metrics) ObserveWebhook(event, outcome string) {
	if event == "" {
		event = "none"
	}
	m.webhooks.WithLabelValues(event, outcome).Inc()
}

// ObserveJob records one finished job.
func (m *Metrics) ObserveJob(kind, outcome string, d time.Duration) {
	m.jobDuration.WithLabelValues(kind, outcome).Observe(d.Seconds())
}

// dbCollector reads the database-backed figures at scrape time.
type dbCollector struct {
	counts Counts
	log    *slog.Logger
}

var (
	jobsDesc = prometheus.NewDesc("perfbot_jobs", "Jobs in the queue by kind and state (River's states).",
		[]string{"kind", "state"}, nil)
	comparisonsDesc = prometheus.NewDesc("perfbot_comparisons_total", "Comparisons stored, by verdict.",
		[]string{"verdict"}, nil)
	upDesc = prometheus.NewDesc("perfbot_database_up", "1 when the last scrape could read the database.", nil, nil)
)

func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- comparisonsDesc
	ch <- upDesc
}

func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	up := 1.0
	if c.counts.Jobs != nil {
		jobs, err := c.counts.Jobs(ctx)
		if err != nil {
			c.log.Error("metrics: count jobs", "err", err)
			up = 0
		}
		for k, n := range jobs {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
		}
	}
	if c.counts.Comparisons != nil {
		cmp, err := c.counts.Comparisons(ctx)
		if err != nil {
			c.log.Error("metrics: count comparisons", "err", err)
			up = 0
		}
		for v, n := range cmp {
			ch <- prometheus.MustNewConstMetric(comparisonsDesc, prometheus.CounterValue, float64(n), v)
		}
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, up)
}
