package runner

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgressPrintsPlainLinesWhenNotATerminal(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgress(&buf, 4)
	for i := range 4 {
		p.start("prove", []string{"base", "head"}[i%2])
		p.done()
	}
	p.grow(2)
	p.start("prove", "base")
	p.done()
	p.finish()
	out := buf.String()
	// The first run is always announced; later ones at most every 10 s, so
	// a fast test sees only the first line and the summary.
	if !strings.HasPrefix(out, "run 1/4: prove base\n") {
		t.Errorf("first line: %q", out)
	}
	if strings.Contains(out, "\r") || strings.Contains(out, "\033[") {
		t.Errorf("terminal control codes written to a non-terminal: %q", out)
	}
	if !strings.HasSuffix(out, "5 runs in 0s\n") {
		t.Errorf("summary: %q", out)
	}
}

func TestProgressETAFollowsRunsDone(t *testing.T) {
	t.Parallel()
	p := newProgress(&bytes.Buffer{}, 10)
	if p.eta() != "" {
		t.Errorf("ETA before any run: %q", p.eta())
	}
	p.finished = 5
	if eta := p.eta(); !strings.HasPrefix(eta, ", about ") || !strings.HasSuffix(eta, " left") {
		t.Errorf("ETA after half the runs: %q", eta)
	}
}

func TestNilProgressIsSilent(t *testing.T) {
	t.Parallel()
	var p *progress
	p.start("x", "base")
	p.done()
	p.grow(1)
	p.finish() // must not panic
	q := newProgress(nil, 3)
	q.start("x", "base")
	q.finish()
}

// A comparison that may add runs says so: the count and the time left
// carry the most they can grow to, so a later look's runs do not read as
// a count going backwards.
func TestProgressSaysHowFarThePlanMayGrow(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgress(&buf, 22)
	p.most = 122
	p.start("prove", "base")
	p.done()
	if !strings.HasPrefix(buf.String(), "run 1/22 (at most 122): prove base\n") {
		t.Errorf("first line %q", buf.String())
	}
	if eta := p.eta(); !strings.Contains(eta, "left (at most ") || !strings.HasSuffix(eta, " if every look adds runs)") {
		t.Errorf("ETA %q, want the time left and the most it can be", eta)
	}
	q := newProgress(&bytes.Buffer{}, 10)
	q.finished = 5
	if strings.Contains(q.eta(), "at most") {
		t.Errorf("a plan that cannot grow says %q", q.eta())
	}
}
