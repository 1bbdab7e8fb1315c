package runner

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
)

// progress shows which run is running and the estimated time left. On a
// terminal it rewrites one line in place; otherwise it prints a plain line
// at most every plainEvery, so CI logs stay short.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	// most is the most runs the plan may grow to (a comparison's cap),
	// 0 when it cannot grow: the progress line says "at most" so that the
	// count and the time left do not jump back unannounced.
	most     int
	finished int
	started  time.Time
	last     time.Time
	label    string
	// observe, when set, hears of every finished run (a check run's
	// progress summary, for one).
	observe func(Progress)
}

// Progress is how far a comparison or baseline has got: runs finished of
// those planned (the plan grows when inconclusive results add runs), and
// the estimated time left (0 before the first run ends).
type Progress struct {
	Finished, Total int
	Left            time.Duration
}

const plainEvery = 10 * time.Second

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, started: time.Now()}
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		p.tty = true
	}
	return p
}

func (p *progress) grow(n int) {
	if p != nil {
		p.total += n
	}
}

// start announces the next run.
func (p *progress) start(bench, side string) {
	if p == nil || p.w == nil {
		return
	}
	p.label = fmt.Sprintf("run %d/%d: %s %s", p.finished+1, p.total, bench, side)
	if p.most > p.total {
		p.label = fmt.Sprintf("run %d/%d (at most %d): %s %s", p.finished+1, p.total, p.most, bench, side)
	}
	eta := p.eta()
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%s%s", p.label, eta)
	case time.Since(p.last) >= plainEvery || p.finished == 0:
		p.last = time.Now()
		fmt.Fprintf(p.w, "%s%s\n", p.label, eta)
	}
}

func (p *progress) done() {
	if p != nil {
		p.finished++
		if p.observe != nil {
			p.observe(Progress{Finished: p.finished, Total: p.total, Left: p.left()})
		}
	}
}

func (p *progress) eta() string {
	if p.finished == 0 {
		return ""
	}
	s := fmt.Sprintf(", about %s left", p.left().Round(time.Second))
	if p.most > p.total {
		s += fmt.Sprintf(" (at most %s if every look adds runs)", (p.per() * time.Duration(p.most-p.finished)).Round(time.Second))
	}
	return s
}

// per returns the mean time a finished run took.
func (p *progress) per() time.Duration {
	return time.Since(p.started) / time.Duration(p.finished)
}

func (p *progress) left() time.Duration {
	if p.finished == 0 {
		return 0
	}
	return p.per() * time.Duration(p.total-p.finished)
}

// finish ends the progress line.
func (p *progress) finish() {
	if p == nil || p.w == nil {
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%d runs in %s\n", p.finished, time.Since(p.started).Round(time.Second))
}
