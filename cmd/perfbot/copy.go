package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/store"
)

// copyProgressEvery is how often perfbot copy says how far it got.
const copyProgressEvery = 3 * time.Second

func newCopyCommand() *cobra.Command {
	var (
		from, to string
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "copy --from URL --to URL",
		Short: "Copy a store's runs, samples and comparisons into another store (SQLite to PostgreSQL, …)",
		Long: `copy moves what a store keeps about measurements into another one, for
instance the default SQLite file into the PostgreSQL database of a bot:
repositories, commits, sessions, runs with their samples, profiles and
spans, comparisons and reported change points. Not copied: the job queue
(PostgreSQL only) and the webhook deliveries a server accepted.

--from and --to take what --db takes: postgres://…, sqlite://PATH or a
file path. The source is only read: it must exist and have this perfbot's
schema (perfbot migrate --db URL upgrades an older one). The destination is
created and migrated as needed; it may hold runs of its own, which stay.

A row the destination has already (a run with the same repository, commit,
kind, config hash, machine, tool and start time; a comparison of the same
commits made at the same time; …) is left as it is, so copying again
copies nothing, and the destination's ids are its own. Each run goes in
with all its samples and profiles in one transaction: an interrupted copy
(Ctrl-C, a killed process) leaves no part of a run behind, and running the
same command again finishes it. At the end the rows of each table are
counted on both sides.

It prints a line per table on stdout (how many rows it copied, how many
were there already) and its progress on stderr every few seconds
(--quiet: none).

Exit status (perfbot --help has the table): 0 copied (or nothing to
copy); 2 bad input (a missing flag, an address that does not parse, a
missing source file, one store on both sides, a source whose schema is
older or newer than this perfbot's); 4 could not run: a database that
cannot be reached, an interrupted copy, counts that differ.`,
		Example: `  perfbot copy --from ~/.local/share/perfbot/perfbot.db --to postgres://perfbot@db.internal/perfbot
  perfbot copy --from postgres://perfbot@old-db/perfbot --to postgres://perfbot@new-db/perfbot --quiet`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			src, dst, err := openCopyStores(ctx, cmd, from, to, quiet)
			if err != nil {
				return err
			}
			defer src.Close()
			defer dst.Close()
			opts := store.CopyOptions{}
			if !quiet {
				opts.Progress = copyProgress(cmd.ErrOrStderr(), time.Now)
			}
			stats, err := store.Copy(ctx, src, dst, opts)
			out := cmd.OutOrStdout()
			if started(stats) || err == nil {
				for _, t := range stats.Tables() {
					fmt.Fprintf(out, "%s: %s copied, %s already there\n", strings.ReplaceAll(t.Table, "_", " "), thousands(t.Copied), thousands(t.Present))
				}
			}
			switch {
			case errors.Is(err, store.ErrSameStore):
				return usagef(cmd, "--from and --to: %v", err)
			case ctx.Err() != nil:
				return fmt.Errorf("interrupted after %s runs: each run is copied whole or not at all; run the same command again to finish (%w)",
					thousands(stats.Runs.Copied), err)
			case err != nil:
				return err
			case !started(stats):
				fmt.Fprintf(out, "nothing to copy: %s is empty\n", src)
			case stats.Copied() == 0:
				fmt.Fprintf(out, "nothing to copy: %s already holds everything in %s (counts checked)\n", dst, src)
			default:
				fmt.Fprintf(out, "copied %s to %s (counts checked)\n", src, dst)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the store to copy from, only read: postgres://…, sqlite://PATH or a file path (required)")
	f.StringVar(&to, "to", "", "the store to copy into, created and migrated as needed: postgres://…, sqlite://PATH or a file path (required)")
	f.BoolVar(&quiet, "quiet", false, "print only warnings and errors on stderr: no progress")
	return cmd
}

// openCopyStores opens copy's source, read-only (no migration, no file
// made), and its destination, migrated and created as needed. Bad input
// is a usage error; a database that cannot be reached is not.
func openCopyStores(ctx context.Context, cmd *cobra.Command, from, to string, quiet bool) (src, dst *store.DB, err error) {
	switch {
	case from == "" && to == "":
		return nil, nil, usagef(cmd, "--from and --to are required: the store to copy from and the one to copy into")
	case from == "":
		return nil, nil, usagef(cmd, "--from is required: the store to copy from (postgres://…, sqlite://PATH or a file path)")
	case to == "":
		return nil, nil, usagef(cmd, "--to is required: the store to copy into (postgres://…, sqlite://PATH or a file path)")
	}
	fromDSN, err := store.ParseDSN(from)
	if err != nil {
		return nil, nil, usagef(cmd, "--from: %v", err)
	}
	toDSN, err := store.ParseDSN(to)
	if err != nil {
		return nil, nil, usagef(cmd, "--to: %v", err)
	}
	if store.SameDatabase(fromDSN, toDSN) {
		return nil, nil, usagef(cmd, "--from and --to are the same database (%s): copy into another one", fromDSN)
	}
	if fromDSN.Driver == store.DriverSQLite {
		// Open would make it: a source that is not there is a mistake.
		fi, err := os.Stat(fromDSN.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, nil, usagef(cmd, "--from: no database at %s: give the path of an existing store", fromDSN.Path)
		case err != nil:
			return nil, nil, usagef(cmd, "--from: %v", err)
		case fi.IsDir():
			return nil, nil, usagef(cmd, "--from: %s is a directory: give the path of the database file in it", fromDSN.Path)
		}
	}
	log := (&common{quiet: quiet}).logger(cmd)
	src, err = store.Open(ctx, from, store.Options{NoMigrate: true, Logger: log})
	if err != nil {
		return nil, nil, fmt.Errorf("--from: %w", err)
	}
	current, latest, err := src.SchemaVersion(ctx)
	switch {
	case err != nil:
		src.Close()
		return nil, nil, fmt.Errorf("--from: %s: %w", src, err)
	case current < latest:
		src.Close()
		return nil, nil, usagef(cmd, "--from: %s has schema version %d and this perfbot copies %d; copy reads the source only, so upgrade it first: perfbot migrate --db %s",
			src, current, latest, from)
	case current > latest:
		src.Close()
		return nil, nil, usagef(cmd, "--from: %s has schema version %d, newer than this perfbot's %d: copy with the perfbot that wrote it", src, current, latest)
	}
	dst, err = store.Open(ctx, to, store.Options{Logger: log})
	if err != nil {
		src.Close()
		if errors.Is(err, store.ErrBadLocation) {
			return nil, nil, usagef(cmd, "--to: %v", err)
		}
		return nil, nil, fmt.Errorf("--to: %w", err)
	}
	return src, dst, nil
}

// started reports whether a copy got as far as a row.
func started(s store.CopyStats) bool {
	for _, t := range s.Tables() {
		if t.Copied+t.Present > 0 {
			return true
		}
	}
	return false
}

// copyProgress returns a CopyOptions.Progress that writes a line to w
// when copyProgressEvery has passed since the copy began or since the
// line before: the tables with rows to copy, each as done/total.
func copyProgress(w io.Writer, now func() time.Time) func(store.CopyStats) {
	last := now()
	return func(s store.CopyStats) {
		if t := now(); t.Sub(last) >= copyProgressEvery {
			last = t
			fmt.Fprintln(w, copyProgressLine(s))
		}
	}
}

func copyProgressLine(s store.CopyStats) string {
	var parts []string
	for _, t := range s.Tables() {
		if t.Source == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s", strings.ReplaceAll(t.Table, "_", " "), thousands(t.Copied+t.Present), thousands(t.Source)))
	}
	return "copy: " + strings.Join(parts, ", ")
}

// thousands formats n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
