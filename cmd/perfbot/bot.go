package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/github/webhook"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/server/dashboard"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// botFlags are the flags perfbot serve and perfbot worker share.
type botFlags struct {
	common
	config string
}

func (b *botFlags) register(cmd *cobra.Command) {
	b.common.register(cmd, false)
	cmd.Flags().StringVar(&b.config, "config", os.Getenv("PERFBOT_CONFIG"), "the server config file: repositories served and how to reach GitHub (env PERFBOT_CONFIG; see docs/server.md)")
}

// setup loads the config and opens the database (PostgreSQL: the queue
// lives there) and the GitHub client.
func (b *botFlags) setup(cmd *cobra.Command) (*botConfig, *store.DB, *github.Client, *slog.Logger, error) {
	log := b.logger(cmd)
	cfg, err := loadBotConfig(b.config)
	if err != nil {
		return nil, nil, nil, nil, &usageError{cmd: cmd.CommandPath(), err: err}
	}
	if b.db == "" {
		b.db = cfg.DB
	}
	if b.db == "" {
		return nil, nil, nil, nil, usagef(cmd, "no database: perfbot %s shares its job queue through PostgreSQL; pass --db postgres://… (or db: in the config, or PERFBOT_DB)", cmd.Name())
	}
	d, err := store.ParseDSN(b.db)
	if err != nil {
		return nil, nil, nil, nil, usagef(cmd, "--db: %v", err)
	}
	if d.Driver != store.DriverPostgres {
		return nil, nil, nil, nil, usagef(cmd, "--db %s is SQLite; perfbot %s shares its job queue through PostgreSQL: pass --db postgres://…", d, cmd.Name())
	}
	opts, err := cfg.githubOptions()
	if err != nil {
		return nil, nil, nil, nil, usagef(cmd, "%v", err)
	}
	opts.Logger = log
	gh, err := github.New(opts)
	if err != nil {
		return nil, nil, nil, nil, usagef(cmd, "%v", err)
	}
	pool, err := cfg.Database.pool(cmd.Name(), defaultPool(cmd.Name()))
	if err != nil {
		return nil, nil, nil, nil, usagef(cmd, "%v", err)
	}
	db, err := store.Open(cmd.Context(), b.db, store.Options{Logger: log, Pool: pool})
	if errors.Is(err, store.ErrPoolTooLarge) {
		setting := "database.max_open_conns"
		if cfg.Database.MaxOpenConns == nil {
			setting += fmt.Sprintf(" (unset: perfbot %s's default %d)", cmd.Name(), pool.MaxOpen)
		}
		return nil, nil, nil, nil, usagef(cmd, "%s: %v: lower it in %s, or raise the server's limit", setting, err, b.config)
	}
	if err != nil {
		return nil, nil, nil, nil, err
	}
	log.Info("database pool", "max_open", pool.MaxOpen, "max_idle", pool.MaxIdle,
		"max_lifetime", pool.MaxLifetime, "max_idle_time", pool.MaxIdleTime)
	return cfg, db, gh, log, nil
}

// workerJobs is how many jobs a worker runs at once: one, since two
// benchmarks at once on one host would measure each other.
const workerJobs = 1

func newServeCommand() *cobra.Command {
	var b botFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Receive GitHub webhooks and queue benchmark jobs for workers",
		Long: `serve listens for GitHub webhooks on POST /webhook (signed with the secret in
the environment variable the config names), turns pull requests, maintainers'
/perfbot commands and pushes to the default branch into jobs in the
PostgreSQL queue, and answers GitHub within milliseconds. It also posts
replies and queued checks (the control queue), and serves GET /healthz,
GET /metrics and the dashboard at / (trends with change points, total time
by phase, comparisons of any two commits, the job queue; JSON under /api/).
perfbot worker runs the benchmarks, on the GPU hosts.

Exit status (perfbot --help has the table): 0 stopped by SIGINT or SIGTERM
once the servers drained; 2 bad input (the config file, --listen); 4 could
not run (the database unreachable, the address taken).`,
		Example: `  GITHUB_TOKEN=… PERFBOT_WEBHOOK_SECRET=… perfbot serve --config perfbot-server.yml --db postgres://perfbot@db/perfbot`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, db, gh, log, err := b.setup(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			secret, err := cfg.webhookSecret()
			if err != nil {
				return usagef(cmd, "%v", err)
			}
			token, err := cfg.dashboardToken()
			if err != nil {
				return usagef(cmd, "%v", err)
			}
			// Both addresses are taken before anything starts, so that one
			// that cannot be had is a setup error naming its setting.
			webhookLn, err := listenOn(cfg.Listen, ":8080")
			if err != nil {
				return usagef(cmd, "listen: %v (the webhook's address, in %s)", err, b.config)
			}
			defer webhookLn.Close()
			var dashLn net.Listener
			if l := cfg.Dashboard.Listen; l != dashboardSame && l != dashboardOff {
				if dashLn, err = listenOn(l, defaultDashboardListen); err != nil {
					return usagef(cmd, "dashboard.listen: %v (the dashboard's own address, in %s; \"same\" shares the webhook's, behind dashboard.token_env)", err, b.config)
				}
				defer dashLn.Close()
			}
			ctx := cmd.Context()
			metrics := server.NewMetrics(server.Counts{
				Jobs:        func(ctx context.Context) (map[[2]string]int, error) { return queue.Counts(ctx, db.SQL()) },
				Comparisons: db.ComparisonCounts,
				Pool:        db.SQL(),
			}, log)
			deps := &jobDeps{store: db, gh: gh, pub: &publisher{gh: gh, checkName: cfg.GitHub.CheckName}, metrics: metrics, log: log}
			workers := allWorkers(deps)
			// Whichever River client leads rescues abandoned jobs with its
			// own settings, so serve uses the workers' job timeout too;
			// its control jobs set their own, shorter, timeout.
			q, err := queue.New(db, queue.Config{
				Queues: map[string]int{queue.ControlQueue: queue.ControlWorkers}, Workers: workers,
				JobTimeout: cfg.jobTimeout, RescueAfter: rescueAfter(cfg.jobTimeout), Logger: log,
			})
			if err != nil {
				return err
			}
			deps.queue = q
			ping := func(ctx context.Context) error { return db.SQL().PingContext(ctx) }
			webhookCfg := server.Config{
				Webhook: &webhook.Handler{
					Secret: secret, Logger: log, // the Dispatcher records delivery IDs with its jobs
					Sink: &server.Dispatcher{Repos: cfg.repos(), Queue: q, Logger: log},
				},
				Metrics: metrics,
				Ping:    ping,
			}
			dashCfg := server.Config{
				Metrics: metrics, Ping: ping, Private: true, Token: token,
				Dashboard: dashboard.New(dashboard.Config{
					Store: db, Logger: log,
					Jobs:       func(ctx context.Context, limit int) ([]queue.Job, error) { return queue.List(ctx, db.SQL(), limit) },
					Queues:     func(ctx context.Context) ([]queue.QueueStatus, error) { return queue.Statuses(ctx, db.SQL()) },
					JobTimeout: cfg.jobTimeout,
				}),
			}
			if cfg.Dashboard.Listen == dashboardSame {
				webhookCfg.Private, webhookCfg.Dashboard, webhookCfg.Token = true, dashCfg.Dashboard, token
			}
			if err := q.Start(ctx); err != nil {
				return err
			}
			defer q.Stop(context.WithoutCancel(ctx))
			go pruneDeliveries(ctx, db, log)
			go rescueControl(ctx, q, log)
			servers := []served{{"webhook", webhookLn, server.New(webhookCfg)}}
			if dashLn != nil {
				servers = append(servers, served{"dashboard", dashLn, server.New(dashCfg)})
			}
			return serveAll(ctx, servers, log)
		},
	}
	b.register(cmd)
	return cmd
}

// controlRescueEvery and controlRescueAfter bound how long a control job
// (a queued check, a reply) that perfbot serve was running when it died
// waits: it counts as abandoned once it has run controlRescueAfter (its
// timeout, controlTimeout, plus a margin) and is found within
// controlRescueEvery, so it runs again within about two minutes (River
// then retries it within seconds) rather than after
// River's rescue, which waits job_timeout + 10 minutes for every kind so as
// to spare measuring jobs.
const (
	controlRescueEvery = 30 * time.Second
	controlRescueAfter = controlTimeout + 15*time.Second
)

// rescueControl rescues abandoned control jobs every controlRescueEvery
// (PERFBOT_CONTROL_RESCUE_EVERY overrides it: tests use a second) until
// ctx ends.
func rescueControl(ctx context.Context, q *queue.Client, log *slog.Logger) {
	every := controlRescueEvery
	if d, err := time.ParseDuration(os.Getenv("PERFBOT_CONTROL_RESCUE_EVERY")); err == nil && d > 0 {
		every = d
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, err := q.RescueControl(ctx, controlRescueAfter); err != nil && ctx.Err() == nil {
			log.Error("rescue control jobs", "err", err)
		} else if n > 0 {
			log.Warn("rescued control jobs left running by a process that is gone", "count", n)
		}
	}
}

// pruneDeliveries forgets webhook deliveries older than GitHub redelivers
// (three days), hourly.
func pruneDeliveries(ctx context.Context, db *store.DB, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := db.PruneDeliveries(ctx, time.Now().Add(-72*time.Hour)); err != nil && ctx.Err() == nil {
			log.Error("prune webhook deliveries", "err", err)
		} else if n > 0 {
			log.Info("pruned webhook deliveries", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// httpLimits bound what one client can hold of perfbot serve's (and a
// worker's /metrics) HTTP server: a client that sends its headers slowly
// (slow-loris), sends a body slowly, reads the answer slowly or keeps an
// idle connection open is cut off after these; headers are capped in
// size. GitHub sends a delivery's headers and body at once and waits up to
// 10 s for the answer.
type httpLimits struct {
	header, read, write, idle time.Duration
	maxHeaderBytes            int
}

var defaultHTTPLimits = httpLimits{header: 5 * time.Second, read: 30 * time.Second, write: 30 * time.Second,
	idle: 2 * time.Minute, maxHeaderBytes: 64 << 10}

func newHTTPServer(h http.Handler, l httpLimits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.header, ReadTimeout: l.read, WriteTimeout: l.write,
		IdleTimeout: l.idle, MaxHeaderBytes: l.maxHeaderBytes}
}

// listenOn listens on addr (def when empty).
func listenOn(addr, def string) (net.Listener, error) {
	if addr == "" {
		addr = def
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return ln, nil
}

// listenAndServe serves h on addr (":8080" when empty) until ctx ends,
// then shuts down gracefully.
func listenAndServe(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	ln, err := listenOn(addr, ":8080")
	if err != nil {
		return err
	}
	return serveAll(ctx, []served{{"http", ln, h}}, log)
}

// served is one listener and what it serves.
type served struct {
	name string
	ln   net.Listener
	h    http.Handler
}

// serveAll serves each listener until ctx ends or one fails, then shuts
// every one down gracefully.
func serveAll(ctx context.Context, all []served, log *slog.Logger) error {
	errc := make(chan error, len(all))
	var srvs []*http.Server
	for _, s := range all {
		srv := newHTTPServer(s.h, defaultHTTPLimits)
		srvs = append(srvs, srv)
		log.Info("listening", "serves", s.name, "addr", s.ln.Addr().String())
		go func() {
			if err := srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s listener: %w", s.name, err)
			}
		}()
	}
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, srv := range srvs {
		if serr := srv.Shutdown(sctx); serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

func newWorkerCommand() *cobra.Command {
	var (
		b         botFlags
		queueName string
		listen    string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Work benchmark jobs from the queue on this (GPU) host",
		Long: `worker claims jobs from the PostgreSQL queue one at a time: it mirrors the
repository (fetching refs/pull/N/head), compares a pull request's head against
its base, stores every run and publishes one comment and a check on the pull
request; or it records baseline runs of a default-branch commit. Several
workers on several hosts share one database. A worker killed mid-job leaves
its job to be rescued and run again once --job-timeout (config job_timeout)
plus ten minutes have passed; what its benchmarks left running is ended by
the next worker to start on the host, or the next session.

Exit status (perfbot --help has the table): 0 stopped by SIGINT or SIGTERM
once the running job ended; 2 bad input (the config file, --listen); 4
could not run (the database unreachable).`,
		Example: `  GITHUB_TOKEN=… perfbot worker --config perfbot-server.yml --queue gpu --db postgres://perfbot@db/perfbot`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, db, gh, log, err := b.setup(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			if queueName == "" {
				return usagef(cmd, "--queue is empty: name the queue this host works (the repos' queue: in the config; default %q)", queue.DefaultQueue)
			}
			dir, err := b.dataDirectory()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			metrics := server.NewMetrics(server.Counts{Pool: db.SQL()}, log)
			deps := &jobDeps{
				runner:  &runner.Runner{DataDir: dir, Store: db, Logger: log, Builder: runner.Builder{Logger: log}},
				store:   db,
				gh:      gh,
				pub:     &publisher{gh: gh, checkName: cfg.GitHub.CheckName},
				metrics: metrics,
				log:     log,
				changes: cfg.changePoints(),
				configs: cfg.externalConfigs(),
			}
			// What a killed worker left running on this host ends now,
			// not when this one takes its first job.
			if err := deps.runner.EndAbandoned(ctx); err != nil {
				log.Warn("abandoned sessions not looked for; the first job will try again", "err", err)
			}
			workers := allWorkers(deps)
			q, err := queue.New(db, queue.Config{
				Queues: map[string]int{queueName: workerJobs}, Workers: workers,
				JobTimeout: cfg.jobTimeout, RescueAfter: rescueAfter(cfg.jobTimeout), Logger: log,
			})
			if err != nil {
				return err
			}
			deps.queue = q
			if err := q.Start(ctx); err != nil {
				return err
			}
			log.Info("working", "queue", queueName, "job_timeout", cfg.jobTimeout)
			if listen != "" {
				go func() {
					h := server.New(server.Config{Metrics: metrics, Private: true,
						Ping: func(ctx context.Context) error { return db.SQL().PingContext(ctx) }})
					if err := listenAndServe(ctx, listen, h, log); err != nil {
						log.Error("metrics listener", "err", err)
					}
				}()
			}
			<-ctx.Done()
			log.Info("stopping: waiting for the running job")
			return q.Stop(context.WithoutCancel(ctx))
		},
	}
	b.register(cmd)
	f := cmd.Flags()
	f.StringVar(&queueName, "queue", queue.DefaultQueue, "the queue to work")
	f.StringVar(&listen, "listen", "", "serve /metrics and /healthz on this address (e.g. :9090); off when empty")
	return cmd
}

// rescueAfter is how long a running job may go before it counts as
// abandoned; PERFBOT_RESCUE_AFTER overrides it (tests use seconds).
func rescueAfter(jobTimeout time.Duration) time.Duration {
	if s := os.Getenv("PERFBOT_RESCUE_AFTER"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > jobTimeout {
			return d
		}
	}
	return jobTimeout + 10*time.Minute
}

func newPRCommand() *cobra.Command {
	var (
		c         common
		repoName  string
		number    int
		source    string
		count     int
		tokenEnv  string
		apiURL    string
		checkName string
		format    string
		failOnReg bool
		verbose   bool
	)
	cmd := &cobra.Command{
		Use:   "pr",
		Short: "Compare one pull request and report on it (GitHub Actions mode)",
		Long: `pr does for one pull request what a worker does for a job: it reads the pull
request's base and head from GitHub, compares them (building and running
both, interleaved), stores every run, and publishes one perfbot comment
(edited in place on later runs) and a check (a commit status with token
auth). It is meant for a workflow on a self-hosted GPU runner; see
.github/workflows/perfbot.yml.

Exit status as for compare (perfbot --help has the table): 0 done; 1 a
regression with --fail-on-regression; 2 bad input; 3 runs failed; 4 could
not run (GitHub or the database unreachable, interrupted).`,
		Example: `  GITHUB_TOKEN=… perfbot pr --repo perfbot/perfbot --pr 42 --source .`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOfFlag(cmd, "format", format, formats); err != nil {
				return err
			}
			repo, err := github.ParseRepo(repoName)
			if err != nil {
				return usagef(cmd, "--repo: %v", err)
			}
			if number <= 0 {
				return usagef(cmd, "--pr is required: the pull request's number")
			}
			token := os.Getenv(tokenEnv)
			if token == "" {
				return usagef(cmd, "no GitHub token: set %s (in a workflow: env: %s: ${{ secrets.GITHUB_TOKEN }})", tokenEnv, tokenEnv)
			}
			ctx := cmd.Context()
			log := c.logger(cmd)
			gh, err := github.New(github.Options{BaseURL: apiURL, Token: token, Logger: log})
			if err != nil {
				return usagef(cmd, "%v", err)
			}
			pr, err := gh.PullRequest(ctx, repo, number)
			if errors.Is(err, github.ErrNotFound) {
				return usagef(cmd, "%s#%d: no such pull request (or the token cannot see it)", repo, number)
			}
			if err != nil {
				return err
			}
			if source == "" {
				source = pr.CloneURL
			}
			r, closeDB, err := c.open(cmd)
			if err != nil {
				return err
			}
			defer closeDB()
			res, err := r.PullRequest(ctx, &publisher{gh: gh, checkName: checkName}, runner.PullRequest{
				Repo: repo.String(), Number: number, Source: source, BaseSHA: pr.BaseSHA, HeadSHA: pr.HeadSHA,
				Count: count, Attempt: 1, FinalAttempt: true,
			})
			if err != nil {
				return inputError(cmd, err)
			}
			if err := renderResult(cmd.OutOrStdout(), format, res, verbose); err != nil {
				return err
			}
			return compareStatus(res, failOnReg)
		},
	}
	c.register(cmd, false)
	c.registerConfig(cmd)
	f := cmd.Flags()
	f.StringVar(&repoName, "repo", os.Getenv("GITHUB_REPOSITORY"), "the pull request's repository, owner/name (env GITHUB_REPOSITORY)")
	f.StringVar(&source, "source", "", "where to build from: a local clone holding both commits (in a workflow: .) or a clone URL (default: the pull request's repository)")
	f.IntVar(&number, "pr", 0, "the pull request's number")
	f.IntVar(&count, "count", 0, "measured runs per side (default: the config's count)")
	f.StringVar(&tokenEnv, "token-env", "GITHUB_TOKEN", "the environment variable holding the GitHub token")
	f.StringVar(&apiURL, "api-url", "", "GitHub Enterprise API root, e.g. https://ghe.example.com/ (default: api.github.com)")
	f.StringVar(&checkName, "check-name", defaultCheckName, "the commit status / check name")
	f.StringVar(&format, "format", "text", "report format on stdout: "+strings.Join(formats, ", "))
	f.BoolVar(&failOnReg, "fail-on-regression", false, "exit 1 when a headline series (thresholds.headline, default total) regressed; with thresholds.fail_on: any-phase, when any phase did")
	f.BoolVarP(&verbose, "verbose", "v", false, "text format: the whole report, not just what fits a screen")
	return cmd
}
