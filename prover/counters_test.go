package prover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	perf "github.com/hodgesds/perf-utils"
	"golang.org/x/sys/unix"
)

// The counter tests are not parallel: perf counters count the whole
// process, so another test's work would be charged to their phases.

// testLogger returns a logger that writes text lines to the returned
// buffer.
func testLogger() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

// realCounters opens the real counters, closed when t ends, and skips t
// when the kernel refuses even the software ones.
func realCounters(t testing.TB) (*meter, *bytes.Buffer) {
	t.Helper()
	log, buf := testLogger()
	c := openCounters(log, openEvent, processThreads)
	t.Cleanup(c.close)
	if why := c.unavailable[0]; why != "" {
		t.Skipf("the kernel refuses software perf counters here: %s", why)
	}
	m := newMeter()
	m.counters = c
	return m, buf
}

func metric(t *testing.T, ms Measurement, unit string) float64 {
	t.Helper()
	v, ok := ms.Metric(unit)
	if !ok {
		t.Fatalf("phase %s has no %s: %v", ms.Phase, unit, ms.Metrics)
	}
	return v
}

// threadCPU returns the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// processCPU returns the process's user and system time (getrusage).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var spinSink uint64

// spin burns d of the calling thread's CPU time, which the caller must
// hold (runtime.LockOSThread), and returns how much it burned.
func spin(d time.Duration) time.Duration {
	start := threadCPU()
	x := uint64(1)
	for threadCPU()-start < d {
		for range 10000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	spinSink += x
	return threadCPU() - start
}

// A worker is a goroutine locked to its own OS thread that burns CPU on
// request. It never unlocks: when exit is called the goroutine returns
// and the runtime ends its thread.
type worker struct {
	tid  int
	work chan time.Duration
	done chan time.Duration
}

func startWorker() *worker {
	w := &worker{work: make(chan time.Duration), done: make(chan time.Duration)}
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		tid <- unix.Gettid()
		for d := range w.work {
			w.done <- spin(d)
		}
	}()
	w.tid = <-tid
	return w
}

// burn has w burn d of its thread's CPU time and returns how much it did.
func (w *worker) burn(d time.Duration) time.Duration {
	w.work <- d
	return <-w.done
}

func (w *worker) exit() { close(w.work) }

// startExitableWorker starts a worker that is not on the process's main
// thread, which the runtime never ends: a goroutine locked to it that
// exits wedges it instead.
func startExitableWorker(t *testing.T) *worker {
	t.Helper()
	w := startWorker()
	if w.tid == os.Getpid() {
		t.Cleanup(w.exit)
		w = startWorker() // the main thread is held
	}
	return w
}

// startLateWorker starts workers until one runs on a thread that is not
// in known, one the runtime started after known was listed; the others
// are ended when t ends.
func startLateWorker(t *testing.T, known []int) *worker {
	t.Helper()
	for range 64 {
		w := startWorker()
		if !slices.Contains(known, w.tid) && w.tid != os.Getpid() {
			return w
		}
		t.Cleanup(w.exit)
	}
	t.Skip("the runtime started no new thread for 64 locked goroutines")
	return nil
}

// waitThreadExit waits until thread tid of this process has ended.
func waitThreadExit(t *testing.T, tid int) {
	t.Helper()
	path := "/proc/self/task/" + strconv.Itoa(tid)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return
		}
	}
	t.Fatalf("thread %d did not exit", tid)
}

func TestCounterTaskClockMatchesTheCPUTimeOfABusyLoop(t *testing.T) {
	m, _ := realCounters(t)
	var spun time.Duration
	cpu0 := processCPU()
	ms, err := m.run(context.Background(), "spin", func() error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		spun = spin(200 * time.Millisecond)
		return nil
	})
	cpu := processCPU() - cpu0
	if err != nil {
		t.Fatal(err)
	}
	tc := metric(t, ms, "task-clock-sec/op")
	t.Logf("task-clock %.4fs, the loop's thread CPU time %.4fs, the process's CPU time (getrusage) around the phase %.4fs",
		tc, spun.Seconds(), cpu.Seconds())
	if tc < 0.98*spun.Seconds() {
		t.Errorf("task-clock-sec/op = %.4f, less than the loop's own CPU time %.4f", tc, spun.Seconds())
	}
	// The counters are read inside the getrusage window, so they cannot
	// hold more than the process used in it. How much less depends on
	// what else the process did around the phase (the runtime's own
	// threads, more of it on a busy machine), so that side is not bounded
	// here: TestCountersCoverEveryThread checks that other threads' time
	// is counted.
	if tc > cpu.Seconds()+0.001 {
		t.Errorf("task-clock-sec/op = %.4f, more than the process's CPU time %.4f (getrusage) around the phase", tc, cpu.Seconds())
	}
}

// TestCountersCoverEveryThread burns CPU on two other threads during a
// phase: one that existed before the counters were opened (it has
// counters of its own) and one the runtime started afterwards (it
// inherited them). Both then exit; their counts must stay in the readings.
func TestCountersCoverEveryThread(t *testing.T) {
	early := startExitableWorker(t)
	m, _ := realCounters(t)
	if !slices.Contains(m.counters.tids, early.tid) {
		t.Fatalf("the counters were not opened on thread %d, which existed before (opened on %v)", early.tid, m.counters.tids)
	}
	late := startLateWorker(t, m.counters.tids)
	ctx := context.Background()

	start := m.begin()
	var spunEarly, spunLate time.Duration
	ms, err := m.run(ctx, "other-threads", func() error {
		// This goroutine only waits: the CPU time is the workers'.
		spunEarly = early.burn(100 * time.Millisecond)
		spunLate = late.burn(100 * time.Millisecond)
		early.exit()
		late.exit()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	spun := (spunEarly + spunLate).Seconds()
	tc := metric(t, ms, "task-clock-sec/op")
	t.Logf("threads %d (early, own counters) and %d (late, inherited) burned %.4fs; task-clock %.4fs", early.tid, late.tid, spun, tc)
	if tc < 0.98*spun {
		t.Errorf("task-clock-sec/op = %.4f, less than the %.4fs the other threads burned", tc, spun)
	}

	waitThreadExit(t, early.tid)
	waitThreadExit(t, late.tid)
	idle, err := m.run(ctx, "after-exit", func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if tc := metric(t, idle, "task-clock-sec/op"); tc < 0 || tc > 0.05 {
		t.Errorf("task-clock-sec/op of an empty phase after the threads exited = %.4f; want 0 to 0.05 (their counts lost or counted again?)", tc)
	}
	end := m.end()
	total := m.diff("span", &start, &end)
	if tc := metric(t, total, "task-clock-sec/op"); tc < 0.98*spun {
		t.Errorf("task-clock-sec/op over both phases = %.4f after the threads exited, less than the %.4fs they burned", tc, spun)
	}
}

func TestCounterContextSwitchesOfBlockingHandOffs(t *testing.T) {
	const handOffs = 200
	ping, pong := make(chan int), make(chan int)
	go func() { // on its own thread, started before the counters
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for v := range ping {
			pong <- v
		}
	}()
	defer close(ping)
	m, _ := realCounters(t)

	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	ms, err := m.run(context.Background(), "hand-offs", func() error {
		runtime.LockOSThread() // each side blocks its own thread
		defer runtime.UnlockOSThread()
		for i := range handOffs {
			ping <- i
			<-pong
		}
		return nil
	})
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if err != nil {
		t.Fatal(err)
	}
	cs := metric(t, ms, "context-switches/op")
	t.Logf("%d round trips: context-switches %v (getrusage: %d voluntary, %d involuntary)",
		handOffs, cs, ru1.Nvcsw-ru0.Nvcsw, ru1.Nivcsw-ru0.Nivcsw)
	if cs < handOffs {
		t.Errorf("context-switches/op = %v for %d blocking round trips between two threads; want at least %d", cs, handOffs, handOffs)
	}
	if _, ok := ms.Metric("cpu-migrations/op"); !ok {
		t.Errorf("no cpu-migrations/op beside context-switches/op: %v", ms.Metrics)
	}
}

func TestPageFaultsOfFreshPages(t *testing.T) {
	m, _ := realCounters(t)
	const pages = 1024
	size := pages * os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE) // one fault per page, not per huge page
	ms, err := m.run(context.Background(), "touch", func() error {
		for i := 0; i < size; i += os.Getpagesize() {
			mem[i] = 1
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pf := metric(t, ms, "page-faults/op"); pf < pages {
		t.Errorf("page-faults/op = %v after touching %d fresh pages", pf, pages)
	}
	n := 0
	for _, x := range ms.Metrics {
		if strings.HasPrefix(x.Unit, "page-faults") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d page-fault units, want one (getrusage's): %v", n, ms.Metrics)
	}
}

// TestEveryCounterIsCountedOrRefusedWithAReason opens the real counters:
// on this machine hardware events may or may not be refused, and either
// way the run goes on.
func TestEveryCounterIsCountedOrRefusedWithAReason(t *testing.T) {
	log, buf := testLogger()
	c := openCounters(log, openEvent, processThreads)
	defer c.close()
	c.logStatus()
	m := newMeter()
	m.counters = c
	ms, err := m.run(context.Background(), "work", func() error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		spin(10 * time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ms.Elapsed <= 0 {
		t.Errorf("elapsed %v", ms.Elapsed)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for i, e := range counterEvents {
		v, counted := ms.Metric(e.unit)
		why := c.unavailable[i]
		t.Logf("%-22s counted=%-5v %-24s %v %s", e.name, counted, e.unit, v, why)
		if counted == (why != "") {
			t.Errorf("%s: counted %v, unavailable %q: want exactly one", e.name, counted, why)
		}
		if why == "" {
			continue
		}
		n := 0
		for _, l := range lines {
			if slices.Contains(loggedCounters(l), e.name) {
				n++
				if !strings.Contains(l, strconv.Quote(why)) {
					t.Errorf("log line for %s lacks the reason %q: %s", e.name, why, l)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s is named on %d log lines, want 1:\n%s", e.name, n, buf)
		}
	}
	if len(c.tids) < 2 && c.counting() != nil {
		t.Errorf("counters opened on %d threads; a Go process has several", len(c.tids))
	}
}

// loggedCounters returns the events an "unavailable" log line names.
func loggedCounters(line string) []string {
	if !strings.Contains(line, "unavailable") {
		return nil
	}
	_, rest, ok := strings.Cut(line, " counters=")
	if !ok {
		return nil
	}
	list, _, _ := strings.Cut(rest, " ")
	return strings.Split(list, ",")
}

func TestEventAttrsDifferOnlyByType(t *testing.T) {
	for i := range counterEvents {
		e := &counterEvents[i]
		a := eventAttr(e)
		want := uint64(unix.PerfBitInherit | unix.PerfBitExcludeHv)
		if e.typ == unix.PERF_TYPE_HARDWARE {
			want |= unix.PerfBitExcludeKernel
			if !strings.HasSuffix(e.name, ":u") {
				t.Errorf("%s counts user space only; its name should say :u", e.name)
			}
		}
		if a.Bits != want {
			t.Errorf("%s: bits %#x, want %#x", e.name, a.Bits, want)
		}
		if a.Type != e.typ || a.Config != e.config || a.Size != perf.EventAttrSize ||
			a.Read_format != unix.PERF_FORMAT_TOTAL_TIME_ENABLED|unix.PERF_FORMAT_TOTAL_TIME_RUNNING {
			t.Errorf("%s: attr %+v", e.name, a)
		}
	}
}

// A fakeCounter advances by a fixed step at every read.
type fakeCounter struct {
	v          perf.ProfileValue
	dv, de, dr uint64
	failRead   int // the read that fails, from 1; 0 for none
	reads      int
	closed     bool
}

func (f *fakeCounter) Start() error { return nil }
func (f *fakeCounter) Reset() error { return nil }
func (f *fakeCounter) Stop() error  { return nil }
func (f *fakeCounter) Close() error { f.closed = true; return nil }
func (f *fakeCounter) Profile(v *perf.ProfileValue) error {
	f.reads++
	if f.reads == f.failRead {
		return unix.EIO
	}
	f.v.Value += f.dv
	f.v.TimeEnabled += f.de
	f.v.TimeRunning += f.dr
	*v = f.v
	return nil
}

// fakeOpener opens fakeCounters, or fails as fail says.
type fakeOpener struct {
	fail   func(event string, tid int) error
	step   func(event string) *fakeCounter // a template; nil for 1000 per read, never multiplexed
	opened []*fakeCounter
}

func (f *fakeOpener) open(attr *unix.PerfEventAttr, tid int) (perf.Profiler, error) {
	name := ""
	for _, e := range counterEvents {
		if e.typ == attr.Type && e.config == attr.Config {
			name = e.name
		}
	}
	if f.fail != nil {
		if err := f.fail(name, tid); err != nil {
			return nil, err
		}
	}
	c := &fakeCounter{dv: 1000, de: 100, dr: 100}
	if f.step != nil {
		if s := f.step(name); s != nil {
			c = &fakeCounter{dv: s.dv, de: s.de, dr: s.dr, failRead: s.failRead}
		}
	}
	f.opened = append(f.opened, c)
	return c, nil
}

func (f *fakeOpener) closed() (n int) {
	for _, c := range f.opened {
		if c.closed {
			n++
		}
	}
	return n
}

func threadList(tids ...int) func() ([]int, error) {
	return func() ([]int, error) { return tids, nil }
}

func eventIndex(t *testing.T, name string) int {
	t.Helper()
	for i, e := range counterEvents {
		if e.name == name {
			return i
		}
	}
	t.Fatalf("no event %s", name)
	return -1
}

func TestRefusedCounterIsLoggedOnceAndLeftOut(t *testing.T) {
	f := &fakeOpener{fail: func(event string, tid int) error {
		switch {
		case tid == 103:
			return unix.ESRCH // exited since it was listed: skipped, no refusal
		case event == "cycles:u":
			return unix.EACCES
		case event == "cache-misses:u" && tid == 102:
			return unix.EINVAL // refused on the second thread only
		}
		return nil
	}}
	log, buf := testLogger()
	c := openCounters(log, f.open, threadList(101, 102, 103))
	defer c.close()
	c.logStatus()
	if !slices.Equal(c.tids, []int{101, 102}) {
		t.Errorf("opened on threads %v, want 101 and 102 (103 exited)", c.tids)
	}
	cacheMisses := eventIndex(t, "cache-misses:u")
	if c.fds[cacheMisses] != nil {
		t.Errorf("cache-misses:u still has counters after the second thread refused it")
	}
	if n := f.closed(); n != 1 {
		t.Errorf("%d counters closed, want 1: cache-misses:u's on thread 101", n)
	}

	m := newMeter()
	m.counters = c
	ms, err := m.run(context.Background(), "work", func() error { time.Sleep(time.Millisecond); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if ms.Elapsed < time.Millisecond {
		t.Errorf("elapsed %v", ms.Elapsed)
	}
	for _, unit := range []string{"B/op", "allocs/op", "page-faults/op", "task-clock-sec/op", "instructions/op"} {
		metric(t, ms, unit)
	}
	for _, unit := range []string{"cycles/op", "cache-misses/op"} {
		if _, ok := ms.Metric(unit); ok {
			t.Errorf("%s present for a refused counter", unit)
		}
	}
	if v := metric(t, ms, "instructions/op"); v != 2000 {
		t.Errorf("instructions/op = %v, want 2000: one read of 1000 per thread", v)
	}
	if v := metric(t, ms, "task-clock-sec/op"); math.Abs(v-2000e-9) > 1e-15 {
		t.Errorf("task-clock-sec/op = %v, want 2e-6: 2 × 1000 ns", v)
	}

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var cycles, misses []string
	for _, l := range lines {
		if strings.Contains(l, "cycles:u") {
			cycles = append(cycles, l)
		}
		if strings.Contains(l, "cache-misses:u") {
			misses = append(misses, l)
		}
	}
	if len(cycles) != 1 || !strings.Contains(cycles[0], "permission denied") || !strings.Contains(cycles[0], paranoid()) ||
		!strings.Contains(cycles[0], "set it to 2 or less") {
		t.Errorf("cycles:u log lines %q; want one, saying permission denied and %q", cycles, paranoid())
	}
	if len(misses) != 1 || !strings.Contains(misses[0], "invalid argument") {
		t.Errorf("cache-misses:u log lines %q; want one, saying invalid argument", misses)
	}
	t.Logf("log:\n%s", buf)
}

func TestOpenReasonSaysWhatToDo(t *testing.T) {
	sw, hw := &counterEvents[eventIndex(t, "task-clock")], &counterEvents[eventIndex(t, "cycles:u")]
	for _, tc := range []struct {
		e    *counterEvent
		err  error
		want string
	}{
		{hw, unix.ENOENT, "perf_event_open: no such file or directory (the kernel or hypervisor does not expose this event)"},
		{hw, unix.EOPNOTSUPP, "does not expose this event"},
		{sw, unix.EACCES, paranoid() + "; run perfbot as root or with CAP_PERFMON, or set it to 1 or less)"},
		{hw, unix.EPERM, "operation not permitted (" + paranoid() + "; run perfbot as root or with CAP_PERFMON, or set it to 2 or less)"},
		{hw, unix.EINVAL, "perf_event_open: invalid argument"},
	} {
		if got := openReason(tc.e, tc.err); !strings.Contains(got, tc.want) {
			t.Errorf("openReason(%s, %v) = %q, want it to contain %q", tc.e.name, tc.err, got, tc.want)
		}
	}
}

func TestMultiplexedCounterIsScaledAndWarnedOnce(t *testing.T) {
	f := &fakeOpener{step: func(event string) *fakeCounter {
		switch event {
		case "cycles:u":
			return &fakeCounter{dv: 1000, de: 100, dr: 25} // counted a quarter of the time
		case "branch-misses:u":
			return &fakeCounter{dv: 0, de: 100, dr: 0} // never on the PMU
		case "instructions:u":
			return &fakeCounter{dv: 1000, de: 100, dr: 100, failRead: 2} // the first phase's end
		}
		return nil
	}}
	log, buf := testLogger()
	c := openCounters(log, f.open, threadList(1, 2))
	defer c.close()
	m := newMeter()
	m.counters = c
	for phase := range 3 {
		ms, err := m.run(context.Background(), fmt.Sprint("p", phase), func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if v := metric(t, ms, "cycles/op"); v != 8000 {
			t.Errorf("phase %d: cycles/op = %v, want 8000: 2 threads × 1000, scaled by 100/25", phase, v)
		}
		if _, ok := ms.Metric("branch-misses/op"); ok {
			t.Errorf("phase %d: branch-misses/op present for a counter that never counted", phase)
		}
		// Thread 1's instructions:u fails its second read: the end of
		// phase 0, then phases 1 and 2 read normally.
		if _, ok := ms.Metric("instructions/op"); ok != (phase == 2) {
			t.Errorf("phase %d: instructions/op present %v, want %v", phase, ok, phase == 2)
		}
		metric(t, ms, "task-clock-sec/op")
	}
	for _, tc := range []struct{ counter, says string }{
		{"cycles:u", "multiplexed"}, {"branch-misses:u", "never counted"}, {"instructions:u", "read failed"},
	} {
		n := strings.Count(buf.String(), "counter="+tc.counter)
		if n != 1 || !strings.Contains(buf.String(), tc.says) {
			t.Errorf("%s: %d warnings, want one saying %q:\n%s", tc.counter, n, tc.says, buf)
		}
	}
	if !strings.Contains(buf.String(), "running_pct=25.0") {
		t.Errorf("the multiplexing warning does not say how much the counter ran:\n%s", buf)
	}
}

func TestOpenStartsOverWhenThreadsAppear(t *testing.T) {
	lists := [][]int{{1, 2}, {1, 2, 3}, {1, 2, 3}, {1, 3}} // 3 starts during the first attempt; 2 exits during the second
	f := &fakeOpener{}
	calls := 0
	c := openCounters(slog.New(slog.DiscardHandler), f.open, func() ([]int, error) {
		calls++
		return lists[calls-1], nil
	})
	defer c.close()
	if c.attempts != 2 || !slices.Equal(c.tids, []int{1, 2, 3}) {
		t.Errorf("attempts %d, threads %v; want 2 attempts and threads 1, 2, 3", c.attempts, c.tids)
	}
	n := len(counterEvents)
	if len(f.opened) != 5*n || f.closed() != 2*n {
		t.Errorf("%d counters opened, %d closed; want %d and the first attempt's %d", len(f.opened), f.closed(), 5*n, 2*n)
	}
	for i := range counterEvents {
		if len(c.fds[i]) != 3 || c.unavailable[i] != "" {
			t.Errorf("%s: %d counters, unavailable %q", counterEvents[i].name, len(c.fds[i]), c.unavailable[i])
		}
	}

	// Threads that never stop starting: every counter is unavailable.
	f = &fakeOpener{}
	var tids []int
	c = openCounters(slog.New(slog.DiscardHandler), f.open, func() ([]int, error) {
		tids = append(tids, len(tids)+1)
		return slices.Clone(tids), nil
	})
	defer c.close()
	if f.closed() != len(f.opened) || c.counting() != nil || !strings.Contains(c.unavailable[0], "threads kept starting") {
		t.Errorf("with threads always starting: %d of %d counters closed, counting %v, reason %q",
			f.closed(), len(f.opened), c.counting(), c.unavailable[0])
	}
}

// settleThreads waits until the threads of earlier workers have ended: until
// the number of threads stops changing for 10 ms, at most a second.
func settleThreads() {
	last := -1
	for range 100 {
		tids, _ := processThreads()
		if len(tids) == last {
			return
		}
		last = len(tids)
		time.Sleep(10 * time.Millisecond)
	}
}

type resultSink struct {
	proofs []ProofResult
}

func (s *resultSink) Start(Info) error          { return nil }
func (s *resultSink) Proof(p ProofResult) error { s.proofs = append(s.proofs, p); return nil }

func TestRunCountersOffPrintsNoCounterUnits(t *testing.T) {
	for _, mode := range []string{"off", "auto", ""} {
		log, buf := testLogger()
		cfg := Config{Circuit: "sha256", Constraints: 1, Backend: "cpu", Phases: "synthesis", SRS: "setup",
			Count: 2, Counters: mode, Logger: log}
		var sink resultSink
		if err := Run(context.Background(), cfg, &sink); err != nil {
			t.Fatalf("counters %q: %v", mode, err)
		}
		refused := strings.Contains(buf.String(), "counters=task-clock")
		for _, p := range sink.proofs {
			for _, ms := range p.Measurements {
				metric(t, ms, "page-faults/op")
				for _, e := range counterEvents {
					_, ok := ms.Metric(e.unit)
					if mode == "off" && ok {
						t.Errorf("counters off: %s has %s", ms.Phase, e.unit)
					}
					if mode != "off" && e.unit == "task-clock-sec/op" && !ok && !refused {
						t.Errorf("counters %q: %s has no %s and the log says no refusal:\n%s", mode, ms.Phase, e.unit, buf)
					}
				}
			}
		}
		if mode == "off" && strings.Contains(buf.String(), "perf counters") {
			t.Errorf("counters off: the log mentions perf counters:\n%s", buf)
		}
		if mode != "off" && !strings.Contains(buf.String(), "perf counters") {
			t.Errorf("counters %q: the log does not say which perf counters count:\n%s", mode, buf)
		}
	}
}

// BenchmarkPhaseBoundary measures one phase boundary's reading (meter.begin;
// end costs the same): with counters off, then on the threads of this
// process, with 32 more threads that existed when the counters were opened
// (a counter each), and with 32 more started afterwards (inherited
// counters, which the kernel sums into their parent's reading). The extra
// threads are idle, blocked on a channel. fds is the number of counters
// read, threads the number of threads they cover, ns/fd the cost per
// counter read.
func BenchmarkPhaseBoundary(b *testing.B) {
	for _, bc := range []struct {
		name          string
		off           bool
		before, after int
	}{
		{"counters=off", true, 0, 0},
		{"threads=process", false, 0, 0},
		{"threads=process+32-own", false, 32, 0},
		{"threads=process+32-inherited", false, 0, 32},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var ws []*worker
			defer func() {
				for _, w := range ws {
					w.exit()
				}
			}()
			settleThreads()
			for range bc.before {
				ws = append(ws, startWorker())
			}
			m := newMeter()
			fds := 0
			if !bc.off {
				c := openCounters(slog.New(slog.DiscardHandler), openEvent, processThreads)
				defer c.close()
				if c.counting() == nil {
					b.Skipf("no perf counters: %s", c.unavailable[0])
				}
				m.counters = c
				fds = len(c.counting()) * len(c.tids)
			}
			for range bc.after {
				ws = append(ws, startWorker())
			}
			b.ReportAllocs()
			var r reading
			for b.Loop() {
				r = m.begin()
			}
			_ = r
			tids, _ := processThreads()
			b.ReportMetric(float64(len(tids)), "threads")
			b.ReportMetric(float64(fds), "fds")
			if fds > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(fds), "ns/fd")
			}
		})
	}
}
