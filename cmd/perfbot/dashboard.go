package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/server/dashboard"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

func newDashboardCommand() *cobra.Command {
	var (
		c        common
		listen   string
		tokenEnv string
	)
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve the dashboard of a store, read-only: SQLite or PostgreSQL, no GitHub",
		Long: `dashboard serves the pages perfbot serve shows (trends with change points,
total time by phase, comparisons of any two commits, and the job queue where
there is one) from a store, SQLite or PostgreSQL, without a server config,
GitHub credentials or a webhook secret. It only reads: it applies no
migration and writes nothing (a store whose schema is older than this
perfbot is refused with the command that upgrades it). The jobs page shows
the queue on PostgreSQL; a SQLite store has none.

Exit status (perfbot --help has the table): 0 stopped by SIGINT or SIGTERM;
2 bad input (no database at --db, a schema older than this perfbot's,
--listen, --token-env); 4 could not run (the database unreachable, the
address taken). dashboard only reads: it never creates a database.`,
		Example: `  perfbot dashboard                      # the default SQLite store, http://127.0.0.1:8081/
  perfbot dashboard --db postgres://perfbot@db/perfbot --listen :8081 --token-env PERFBOT_DASHBOARD_TOKEN`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log := c.logger(cmd)
			token := ""
			if tokenEnv != "" {
				if token = os.Getenv(tokenEnv); strings.TrimSpace(token) == "" {
					return usagef(cmd, "--token-env names %s, which is empty or unset: set it to the dashboard's token, or leave --token-env out to serve without one", tokenEnv)
				}
			}
			if c.db == "" {
				// The default store is read where it is; the dashboard
				// creates none.
				p, err := store.DefaultPath()
				if err != nil {
					return err
				}
				c.db = p
			}
			if dsn, err := store.ParseDSN(c.db); err == nil && dsn.Driver == store.DriverSQLite {
				if _, err := os.Stat(dsn.Path); errors.Is(err, os.ErrNotExist) {
					return usagef(cmd, "--db: no database at %s: run perfbot compare (or perfbot migrate) to make one, or pass --db", dsn.Path)
				}
			}
			db, err := c.openDB(ctx, cmd, store.Options{NoMigrate: true, Logger: log})
			if err != nil {
				return err
			}
			defer db.Close()
			current, latest, err := db.SchemaVersion(ctx)
			if err != nil {
				return err
			}
			if current < latest {
				return usagef(cmd, "--db: %s has schema version %d and this perfbot reads %d; the dashboard writes nothing, so upgrade it first: perfbot migrate --db %s", db, current, latest, c.db)
			}
			ln, err := listenOn(listen, defaultDashboardListen)
			if err != nil {
				return usagef(cmd, "--listen: %v", err)
			}
			defer ln.Close()
			cfg := dashboard.Config{Store: db, Logger: log}
			if db.Driver() == store.DriverPostgres {
				cfg.Jobs = func(ctx context.Context, limit int) ([]queue.Job, error) { return queue.List(ctx, db.SQL(), limit) }
				cfg.Queues = func(ctx context.Context) ([]queue.QueueStatus, error) { return queue.Statuses(ctx, db.SQL()) }
			}
			h := server.New(server.Config{
				Private: true, Dashboard: dashboard.New(cfg), Token: token,
				Ping: func(ctx context.Context) error { return db.SQL().PingContext(ctx) },
			})
			mode := "read-only"
			if token != "" {
				mode += ", token required"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "perfbot dashboard of %s at http://%s/ (%s)\n", db, ln.Addr(), mode)
			return serveAll(ctx, []served{{"dashboard", ln, h}}, log)
		},
	}
	c.register(cmd, false)
	f := cmd.Flags()
	f.StringVar(&listen, "listen", defaultDashboardListen, "the address to serve on")
	f.StringVar(&tokenEnv, "token-env", "", "require the token in this environment `VARIABLE` of every request (Authorization: Bearer TOKEN, or basic auth with it as password)")
	return cmd
}
