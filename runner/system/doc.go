// Package system inspects the machine benchmarks run on for sources of
// noise, and measures how much of the machine other programs used while a
// comparison ran. It reads; it never changes a setting.
//
// In flow files under /proc and /sys (below Options.Root, "/" unless a
// test points it at a fixture tree) and what NVML says about each GPU.
// Inspect reads them and returns a Report: one Finding per source of noise
// (its state, whether that is ok, a known noise source (warn), only
// information, or could not be read (unknown, with the reason), the exact
// change that would remove it and the file it came from), the busiest
// other processes over a short sampling interval, and per GPU its
// persistence mode, application clocks, clock event reasons, ECC mode and
// the other processes using it. Report.Warnings picks the findings a
// comparison should carry; WriteText and WriteJSON render the whole
// report.
//
// StartUsage and UsageMeter.Stop bracket a stretch of work (the runs of a
// comparison) and return a Usage: how many CPUs everything but this
// process and its children used on average, how much the hypervisor
// stole, how many pages were swapped in, and which other processes used
// the most CPU: by process, of those alive at Stop, and by command name,
// from samples every UsageSampleInterval in between, which count the
// processes that started and exited between samples through their
// parents' waited-for children's time (a build's fifty short cc1
// processes are "cc1", fifty of them), and how much of the busy CPU no
// process accounts for.
//
// The package is Linux-only. It knows nothing of analysis or store: the
// comparison turns its warnings into report caveats.
package system
