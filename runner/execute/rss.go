package execute

import (
	"fmt"
	"os"

	"github.com/prometheus/procfs"
)

// Peak RSS comes from the rusage of the benchmark's exit, which has a
// catch: os/exec starts children with vfork, so at exec the kernel folds
// the high-water RSS of the memory the child shared with perfbot into the
// child's own peak (exec_mmap's setmax_mm_hiwater_rss). The child's
// ru_maxrss is therefore max(perfbot's peak RSS at exec, the benchmark's
// peak). Run resets perfbot's high-water mark to its current RSS just
// before the start, and keeps the value only when it is above perfbot's
// own peak: then it can only be the benchmark's.

// resetOwnPeakRSS sets this process's high-water RSS mark to its current
// RSS (clear_refs "5", Linux 4.0). It is best effort: without it the
// threshold is just higher.
func resetOwnPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// ownPeakRSS returns this process's high-water RSS mark in bytes
// (VmHWM in /proc/self/status).
func ownPeakRSS() (uint64, error) {
	p, err := procfs.Self()
	if err != nil {
		return 0, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, err
	}
	if st.VmHWM == 0 {
		return 0, fmt.Errorf("no VmHWM in /proc/self/status")
	}
	return st.VmHWM, nil
}

// peakRSS judges the child's peak RSS in bytes against perfbot's own peak
// before and after the run (the larger counts) and returns it, or why it
// is not the benchmark's.
func peakRSS(child uint64, ownBefore, ownAfter uint64, ownErr error) (uint64, string) {
	if ownErr != nil {
		return 0, "read perfbot's own peak RSS: " + ownErr.Error()
	}
	own := max(ownBefore, ownAfter)
	if child <= own {
		return 0, fmt.Sprintf("the benchmark's rusage peak (%d MiB) does not exceed perfbot's own peak RSS (%d MiB), "+
			"which the kernel folds into a vfork'ed child's: the benchmark's own peak is unknown", child>>20, own>>20)
	}
	return child, ""
}
