package system

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// killPID kills a process this test started.
func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// machineBusy reads the busy clock ticks of /proc/stat's cpu line
// (user, nice, system, irq, softirq, steal) for the test itself.
func machineBusy(t *testing.T) uint64 {
	t.Helper()
	line, _, _ := strings.Cut(readFile(t, "/proc/stat"), "\n")
	f := strings.Fields(line)
	var busy uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			t.Fatalf("/proc/stat cpu line %q: %v", line, err)
		}
		busy += v
	}
	return busy
}

// These tests are not parallel: each needs the CPUs its busy loops use.

func TestUsageCountsAProcessThatIsNotOursAsOther(t *testing.T) {
	// The shell starts the loop in the background and exits: the loop is
	// reparented away from this process, which never waits for it.
	out, err := exec.Command("sh", "-c", "sh -c '"+busyLoop+"' </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = killPID(pid) })
	time.Sleep(20 * time.Millisecond) // let the shell that started it exit
	if st, ok := parseStat(readFile(t, "/proc/"+strconv.Itoa(pid)+"/stat")); !ok || st.ppid == os.Getpid() {
		t.Fatalf("the loop %d is this process's child (%+v): the test proves nothing", pid, st)
	}

	listAll(t)
	before := ticksOf(t, pid)
	m, err := StartUsage()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	u := m.Stop()
	used := float64(ticksOf(t, pid)-before) / clockTicks
	if u.Unavailable != "" || u.Wall < 500*time.Millisecond || u.Wall > 2*time.Second {
		t.Fatalf("usage %+v", u)
	}
	// However busy the machine is, the loop's own CPU is part of
	// OtherCPUs (less a few ticks at either end).
	loop := used / u.Wall.Seconds()
	if loop < 0.1 {
		t.Fatalf("the loop got %.2f CPUs: the machine is too busy to tell", loop)
	}
	if u.OtherCPUs < loop-0.1 {
		t.Errorf("OtherCPUs %.2f with a loop that is not ours using %.2f CPUs", u.OtherCPUs, loop)
	}
	i := slices.IndexFunc(u.Top, func(p Process) bool { return p.PID == pid })
	if i < 0 || u.Top[i].Comm != "sh" || math.Abs(u.Top[i].CPUPct-100*loop) > 10 {
		t.Errorf("the loop %d (%.0f%% of a CPU by its own stat) is not in Top at that share: %+v", pid, 100*loop, u.Top)
	}
	if u.OwnCPUs > 0.3 {
		t.Errorf("OwnCPUs %.2f while this process slept", u.OwnCPUs)
	}
}

func TestUsageCountsOurOwnWorkAsOwn(t *testing.T) {
	child := startBusy(t, busyLoop) // a child, running at both ends
	busy0 := machineBusy(t)
	m, err := StartUsage()
	if err != nil {
		t.Fatal(err)
	}
	child0 := ticksOf(t, child.Process.Pid)
	// A busy goroutine on its own thread, which measures its own CPU.
	loop := make(chan time.Duration)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var a, b unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_THREAD, &a)
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
		}
		_ = unix.Getrusage(unix.RUSAGE_THREAD, &b)
		loop <- time.Duration(b.Utime.Nano() + b.Stime.Nano() - a.Utime.Nano() - a.Stime.Nano())
	}()
	loopCPU := (<-loop).Seconds()
	childCPU := float64(ticksOf(t, child.Process.Pid)-child0) / clockTicks
	u := m.Stop()
	busy := float64(machineBusy(t)-busy0) / clockTicks
	wall := u.Wall.Seconds()

	ours := (loopCPU + childCPU) / wall
	const slack = 0.08 // /proc/stat counts by ticks: a few either way, over a second
	if ours < 2*slack {
		t.Fatalf("the loops used %.2f CPUs: too little to tell own from other", ours)
	}
	if u.OwnCPUs < ours-slack {
		t.Errorf("OwnCPUs %.2f, but the goroutine and the child alone used %.2f", u.OwnCPUs, ours)
	}
	if limit := busy/wall - ours + slack; u.OtherCPUs > limit {
		t.Errorf("OtherCPUs %.2f counts our own work: the machine was busy %.2f CPUs, of which ours %.2f", u.OtherCPUs, busy/wall, ours)
	}
	for _, p := range u.Top {
		if p.PID == os.Getpid() || p.PID == child.Process.Pid {
			t.Errorf("our own process in Top: %+v", p)
		}
	}
}
