package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes, the same for every command (exitCodes is the table that
// perfbot --help and the README print).
const (
	exitOK         = 0
	exitRegression = 1 // the finding asked to gate on: a regression with --fail-on-regression
	exitUsage      = 2 // bad input: nothing ran, nothing was created or stored
	exitRunsFailed = 3 // a build or a run failed: the result is incomplete
	exitCannotRun  = 4 // could not run: database unreachable, time limit, interrupted, another failure
	exitNoChange   = 5 // bisect: the ends do not differ, so there is nothing to bisect
)

// exitCodes is the exit-status table of perfbot --help.
const exitCodes = `Exit status (every command):
  0  done
  1  a regression, with --fail-on-regression (compare, pr)
  2  bad input: a flag, a revision, a config or a database path that is
     wrong, or nothing stored to read; nothing was created or stored
  3  a build or a run failed; what was measured is stored and reported
  4  could not run: the database unreachable, --timeout ran out,
     interrupted (SIGINT, SIGTERM), or another failure outside the code
     measured; what was stored before it is kept
  5  bisect: the good and the bad end do not differ, so there is nothing
     to bisect (the message gives their comparison)`

// A usageError is bad input from the user: perfbot prints it with a pointer
// to the help and exits 2.
type usageError struct {
	cmd string
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(cmd *cobra.Command, format string, args ...any) error {
	return &usageError{cmd: cmd.CommandPath(), err: fmt.Errorf(format, args...)}
}

func exitCode(err error) int {
	var ue *usageError
	var se *statusError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &se):
		return se.code
	default:
		return exitCannotRun
	}
}

// run is the whole perfbot command: main only calls it, so every command
// can be tested in-process with its own arguments and output streams.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && !errors.As(err, new(*usageError)) {
		// SIGINT or SIGTERM: whatever the command was doing failed
		// because of it, and it says so.
		err = &statusError{exitCannotRun, "interrupted: " + err.Error()}
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown shorthand flag") || strings.HasPrefix(err.Error(), "unknown flag") {
		err = &usageError{cmd: "perfbot", err: err}
	}
	fmt.Fprintf(stderr, "perfbot: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ue.cmd)
	}
	return err
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "perfbot",
		Short: "Performance-regression CI for GPU proving pipelines",
		Long: `perfbot catches slowdowns in a Groth16 proving pipeline before they merge.

It builds and runs the prover (SHA-256 synthesis in Go, NTT and MSM on the
CPU or a GPU) with phase instrumentation, stores every sample, compares a
head revision against its base with benchstat's statistics, and reports
which phase got slower, by how much, and why.

` + exitCodes,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{cmd: cmd.CommandPath(), err: err}
	})
	root.AddCommand(newCompareCommand(), newInitCommand(), newRunCommand(), newBackfillCommand(), newExportCommand(), newCalibrateCommand(),
		newProveCommand(), newTrendCommand(), newBisectCommand(), newMigrateCommand(), newCopyCommand(), newServeCommand(), newDashboardCommand(), newWorkerCommand(), newPRCommand(), newSystemCommand(), newVersionCommand())
	return root
}
