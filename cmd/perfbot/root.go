package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // bad flags or arguments: nothing ran
)

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
		return exitFailure
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
which phase got slower, by how much, and why.`,
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
