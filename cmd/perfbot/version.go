package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print perfbot's version and build information",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev, dirty := "unknown", ""
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					switch s.Key {
					case "vcs.revision":
						rev = s.Value
					case "vcs.modified":
						if s.Value == "true" {
							dirty = " (modified)"
						}
					}
				}
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "perfbot %s%s %s %s/%s\n", rev, dirty, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef(cmd, "%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}
