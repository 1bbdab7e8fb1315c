// Package execute runs one benchmark process and turns what it did into an
// analysis.Run.
//
// In flows a Spec: an argv (no shell), a working directory, an explicit
// environment, a time limit and an optional CPU affinity. Run starts the
// process in its own process group, counts the whole process tree with
// perf software counters (and hardware counters where the kernel allows),
// parses its standard output as Go benchmark format
// (golang.org/x/perf/benchfmt) and classifies how it ended. Out flows a
// Result: the run's status, detail and samples, the benchmark file's
// configuration lines, warnings, the counters that could not be opened
// and why, the tail of standard error and the wall time. While the
// process runs, every GPU is sampled through NVML (clocks, power,
// temperature, utilization, memory, clock event reasons, energy), and the
// readings are summarized into process samples as well. A Spec may also
// ask the program for a CPU profile, which the Result then carries.
//
// RunCallgrind runs a Spec once under valgrind's callgrind instead and
// returns simulated instruction counts: one per span the program marks
// (SpanBeginFunc, SpanEndFunc) and one for the process, deterministic
// where timings are not.
//
// Every process a run starts carries OwnerEnv in its environment, naming
// the perfbot process it runs for. A run kills its whole process group
// when it ends, but a perfbot process that is killed cannot: EndLeftovers,
// run by the next one on the host, finds what it left by that variable
// and kills it.
//
// Fingerprint describes the machine a run happened on (CPU, memory,
// kernel, GPUs through NVML) so that runs from different machines are
// never compared as if they were alike.
//
// The package is Linux-only: it relies on perf_event_open, process groups
// and sched_setaffinity. It needs cgo for NVML.
package execute
