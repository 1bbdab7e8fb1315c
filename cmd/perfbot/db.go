package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	// created is the SQLite file this command created, "" when it
	// opened one that existed (or PostgreSQL): a refusal removes it.
	created string
}

func (c *common) register(cmd *cobra.Command, repo bool) {
	f := cmd.Flags()
	if repo {
		f.StringVar(&c.repo, "repo", ".", "the repository: a local path or a clone URL")
	}
	f.StringVar(&c.db, "db", os.Getenv("PERFBOT_DB"), "database: postgres://…, sqlite://PATH or a file path (default: perfbot.db in the user data directory; env PERFBOT_DB)")
	f.StringVar(&c.dataDir, "data-dir", os.Getenv("PERFBOT_DATA_DIR"), "where mirrors, worktrees and builds live (default: the user data directory's perfbot/; env PERFBOT_DATA_DIR)")
	f.BoolVar(&c.quiet, "quiet", false, "print only warnings and errors on stderr")
	// A command that refuses its input (exit 2) leaves no database
	// behind: a SQLite file it created for nothing is removed again.
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			if c.created != "" && exitCode(err) == exitUsage {
				if _, rerr := store.RemoveUnusedSQLite(context.WithoutCancel(cmd.Context()), c.created); rerr != nil {
					c.logger(cmd).Warn("the refused command's new database was not removed", "path", c.created, "err", rerr)
				}
			}
			return err
		}
	}
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
	d, err := store.ParseDSN(dsn)
	if err != nil {
		return nil, usagef(cmd, "--db: %v", err)
	}
	created := ""
	if d.Driver == store.DriverSQLite {
		if _, err := os.Stat(d.Path); errors.Is(err, fs.ErrNotExist) {
			created = d.Path
		}
	}
	db, err := store.Open(ctx, dsn, opts)
	if errors.Is(err, store.ErrBadLocation) {
		return nil, usagef(cmd, "--db: %v", err)
	}
	if err == nil && created != "" {
		c.created = created
	}
	return db, err
}

// openExisting opens the database of a command that only reads (export,
// trend): a SQLite file that is not there, or a database no perfbot has
// written to, is bad input, never a database to create. One that an
// older perfbot wrote is brought up to date, as every command does.
func (c *common) openExisting(ctx context.Context, cmd *cobra.Command, log *slog.Logger) (*store.DB, error) {
	dsn := c.db
	if dsn == "" {
		p, err := store.DefaultPath()
		if err != nil {
			return nil, err
		}
		dsn = p
	}
	d, err := store.ParseDSN(dsn)
	if err != nil {
		return nil, usagef(cmd, "--db: %v", err)
	}
	nothing := func(where string) error {
		return usagef(cmd, "no database at %s: nothing is stored there yet (perfbot compare and perfbot run store runs); "+
			"give --db the database to read (or set PERFBOT_DB)", where)
	}
	if d.Driver == store.DriverSQLite {
		if _, err := os.Stat(d.Path); errors.Is(err, fs.ErrNotExist) {
			return nil, nothing(d.Path)
		}
	}
	db, err := store.Open(ctx, dsn, store.Options{NoMigrate: true, Logger: log})
	if errors.Is(err, store.ErrBadLocation) {
		return nil, usagef(cmd, "--db: %v", err)
	}
	if err != nil {
		return nil, err
	}
	current, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	if current == 0 {
		db.Close()
		return nil, nothing(db.String())
	}
	if current < latest {
		if _, err := db.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
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
		Long: `migrate applies the migrations that the database at --db (default: the
embedded SQLite file, created when missing) lacks, names each, and prints
the schema version.

Exit status (perfbot --help has the table): 0 done; 2 bad input (a --db
that does not parse or has no place for a file); 4 could not run (the
database unreachable, a schema newer than this perfbot's).`,
		Args: noArgs,
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
