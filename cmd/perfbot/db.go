package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/execute"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/store"
)

// common holds the flags every command that touches the store or a
// repository shares.
type common struct {
	repo    string
	db      string
	dataDir string
	quiet   bool
	// config is --config: a measurement config from outside the
	// repository (registerConfig), "" for none.
	config string
}

func (c *common) register(cmd *cobra.Command, repo bool) {
	f := cmd.Flags()
	if repo {
		f.StringVar(&c.repo, "repo", ".", "the repository: a local path or a clone URL")
	}
	f.StringVar(&c.db, "db", os.Getenv("PERFBOT_DB"), "database: postgres://…, sqlite://PATH or a file path (default: perfbot.db in the user data directory; env PERFBOT_DB)")
	f.StringVar(&c.dataDir, "data-dir", os.Getenv("PERFBOT_DATA_DIR"), "where mirrors, worktrees and builds live (default: the user data directory's perfbot/; env PERFBOT_DATA_DIR)")
	f.BoolVar(&c.quiet, "quiet", false, "print only warnings and errors on stderr")
}

// registerConfig adds --config, for the commands that measure.
func (c *common) registerConfig(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.config, "config", "", "measure with this `FILE` (a .perfbot.yml kept outside the repository) instead of the base revision's .perfbot.yml; the head revision's is never read")
}

func (c *common) logger(cmd *cobra.Command) *slog.Logger {
	level := slog.LevelInfo
	if c.quiet {
		level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
}

// openStore opens the configured database, the embedded SQLite file by
// default, and applies pending migrations.
func (c *common) openStore(ctx context.Context, cmd *cobra.Command, log *slog.Logger) (*store.DB, error) {
	return c.openDB(ctx, cmd, store.Options{Logger: log})
}

// openDB opens the configured database with opts: --db, else the default
// file, whose directory (the user data directory) it creates. A --db that
// does not parse, or whose place cannot hold a database, is a usage error.
func (c *common) openDB(ctx context.Context, cmd *cobra.Command, opts store.Options) (*store.DB, error) {
	dsn := c.db
	if dsn == "" {
		p, err := store.DefaultPath()
		if err != nil {
			return nil, err
		}
		dsn, opts.CreateDir = p, true
	}
	if _, err := store.ParseDSN(dsn); err != nil {
		return nil, usagef(cmd, "--db: %v", err)
	}
	db, err := store.Open(ctx, dsn, opts)
	if errors.Is(err, store.ErrBadLocation) {
		return nil, usagef(cmd, "--db: %v", err)
	}
	return db, err
}

func (c *common) dataDirectory() (string, error) {
	if c.dataDir != "" {
		return c.dataDir, nil
	}
	p, err := store.DefaultPath()
	if err != nil {
		return "", err
	}
	return filepath.Dir(p), nil
}

// open opens the store and returns a Runner over it, and the function
// that closes the store.
func (c *common) open(cmd *cobra.Command) (*runner.Runner, func() error, error) {
	log := c.logger(cmd)
	// A --config that is missing or does not parse stops the command
	// before the database is touched.
	var ext *runner.ExternalConfig
	if c.config != "" {
		var err error
		if ext, err = runner.ReadConfigFile(c.config, "--config"); err != nil {
			return nil, nil, usagef(cmd, "%v", err)
		}
	}
	dir, err := c.dataDirectory()
	if err != nil {
		return nil, nil, err
	}
	db, err := c.openStore(cmd.Context(), cmd, log)
	if err != nil {
		return nil, nil, err
	}
	prog := cmd.ErrOrStderr()
	if c.quiet {
		prog = nil
	}
	return &runner.Runner{DataDir: dir, Store: db, Logger: log, Progress: prog, Config: ext}, db.Close, nil
}

// inputError turns errors caused by what the user gave (a path that is no
// repository, an unknown revision, an invalid config) into usage errors,
// so they exit 2.
func inputError(cmd *cobra.Command, err error) error {
	for _, target := range []error{workspace.ErrNotRepository, workspace.ErrUnknownRevision, runner.ErrInvalidConfig, runner.ErrNoConfig, runner.ErrNothingToCompare, runner.ErrUnreachable, execute.ErrNoValgrind} {
		if errors.Is(err, target) {
			return &usageError{cmd: cmd.CommandPath(), err: err}
		}
	}
	return err
}

func newMigrateCommand() *cobra.Command {
	var c common
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations and print the schema version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			db, err := c.openDB(ctx, cmd, store.Options{NoMigrate: true, Logger: c.logger(cmd)})
			if err != nil {
				return err
			}
			defer db.Close()
			applied, err := db.Migrate(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, m := range applied {
				fmt.Fprintf(out, "applied %s\n", m.Name)
			}
			cur, latest, err := db.SchemaVersion(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s: schema version %d (this perfbot knows up to %d)\n", db, cur, latest)
			return nil
		},
	}
	c.register(cmd, false)
	cmd.Flags().Lookup("quiet").Hidden = true
	cmd.Flags().Lookup("data-dir").Hidden = true
	return cmd
}

func openWorkspace(ctx context.Context, source, dataDir string) (*workspace.Workspace, error) {
	return workspace.Open(ctx, source, dataDir)
}
