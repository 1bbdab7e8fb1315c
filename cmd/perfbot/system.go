package main

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/runner/system"
)

var systemFormats = []string{"text", "json"}

func newSystemCommand() *cobra.Command {
	var (
		format   string
		interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "system",
		Short: "Show the sources of benchmark noise on this machine and what to change",
		Long: `system inspects this machine (the runner) and prints each source of benchmark
noise it knows, with its state and the exact change that would remove it. It
changes nothing: run the commands it suggests yourself.

Each line is a name, a status and the state read; an advice line ("->")
under it says what to change. The statuses: ok (as benchmarks want it),
warn (a known noise source is on), info (worth knowing; often worth changing
on a dedicated runner), unknown (could not be read: the state says why).

  cpu-governor         cpufreq scaling governor of every CPU: performance is
                       ok; no cpufreq directory (a VM) is info
  cpu-boost            intel_pstate turbo or cpufreq boost: on is warn, the
                       frequency then follows temperature and load
  smt                  hyperthreading: on is info (siblings share a core)
  isolated-cpus        isolcpus=/nohz_full= CPUs: none is info; pin
                       benchmarks to isolated CPUs with cpus: in .perfbot.yml
  aslr                 address space randomization: 2 (full) is ok, as pyperf
                       tunes it: layouts vary per run and average out; 0 or 1
                       is warn, one fixed layout can bias a side
  load                 load averages: warn when the 1-minute load is above 0.5
  busy-processes       other processes' CPU over --interval: warn when one
                       used more than 20% of a CPU (perfbot is left out)
  perf-event-paranoid  which perf counters an unprivileged process opens:
                       2 is info (user space only), above 2 warn (none)
  swap                 swap in use is warn
  thp, thp-defrag      transparent huge pages: always is warn (khugepaged
                       and compaction add latency); madvise, never are ok
  toolchain-go, toolchain-make, toolchain-nvcc
                       the programs the GPU config's build steps run, with
                       their versions and paths (nvcc also from
                       /usr/local/cuda/bin): missing is info, with what to
                       install; found but not running is warn

Then the busiest other processes (pid, % of one CPU, command), and a GPU
section through NVML: the driver, then per GPU persistence-mode (off is
warn), app-clocks (application clocks below the maximum are warn),
clock-reasons (a throttle reason now is warn), ecc (a pending change is
warn) and gpu-processes (any other process on the GPU is warn). Without an
NVIDIA driver the section says why NVML is unavailable. What a device does
not support is info.

--format json prints the same report as one JSON object, with the file or
NVML call each finding read (source).

Exit status (perfbot --help has the table): 0 whatever it finds, also
when something cannot be read; 2 bad flags.`,
		Example: `  perfbot system
  perfbot system --format json --interval 3s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOfFlag(cmd, "format", format, systemFormats); err != nil {
				return err
			}
			if interval <= 0 {
				return usagef(cmd, "--interval %v: must be positive", interval)
			}
			r := system.Inspect(cmd.Context(), system.Options{Interval: interval, Exclude: []int{os.Getpid()}})
			if format == "json" {
				return r.WriteJSON(cmd.OutOrStdout())
			}
			return r.WriteText(cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "text", "output format: "+strings.Join(systemFormats, ", "))
	fl.DurationVar(&interval, "interval", system.DefaultInterval, "how long to sample other processes' CPU use")
	return cmd
}
