package execute

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
)

// residentModeEnv picks how the resident helper misbehaves, and on which
// run (counting from 1): "die:2" exits 3 during the second run, "hang:2"
// never answers it, "bogus:2" prints an unknown protocol line, "fail:2"
// reports it failed and serves on, "silent:2" says done with no result.
const residentModeEnv = "PERFBOT_EXECUTE_RESIDENT_MODE"

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func init() {
	// resident serves runs through the resident protocol: each run prints
	// a phase line whose value is the run's number (1000 ns, 2000 ns, …)
	// and spins 50 ms of CPU; a CPU profile is written where asked.
	helpers["resident"] = func() int {
		if os.Getenv(ResidentEnv) != "1" {
			fmt.Fprintln(os.Stderr, "resident helper: PERFBOT_RESIDENT is not 1")
			return 2
		}
		mode, at := "", 0
		if m := os.Getenv(residentModeEnv); m != "" {
			fmt.Sscanf(strings.Replace(m, ":", " ", 1), "%s %d", &mode, &at)
		}
		fmt.Println("loading keys (ignored before ready)")
		fmt.Println(ResidentReady)
		in := bufio.NewScanner(os.Stdin)
		for n := 1; in.Scan(); n++ {
			req := strings.Fields(in.Text())
			if len(req) == 0 || req[0] != "run" {
				fmt.Fprintf(os.Stderr, "unknown request %q\n", in.Text())
				return 2
			}
			var prof *os.File
			for _, kv := range req[1:] {
				if p, ok := strings.CutPrefix(kv, "cpuprofile="); ok {
					prof, _ = os.Create(p)
					pprof.StartCPUProfile(prof)
				}
			}
			if n == at {
				switch mode {
				case "die":
					fmt.Fprintln(os.Stderr, "out of device memory")
					os.Exit(3)
				case "hang":
					time.Sleep(time.Hour)
				case "bogus":
					fmt.Println("#perfbot finished")
					continue
				case "fail":
					fmt.Println(ResidentFailed + " out of device memory")
					continue
				case "silent":
					fmt.Println(ResidentDone)
					continue
				}
			}
			// 50 ms of this process's CPU time, not of the clock: on a
			// loaded machine 50 ms of wall got 10 ms of CPU, and the
			// test's CPU bound failed (make test beside other builds).
			end := processCPU() + 50*time.Millisecond
			for processCPU() < end {
			}
			fmt.Printf("goos: linux\nBenchmarkServe/phase=work 1 %d ns/op\n", n*1000)
			fmt.Println("# perfbot-span Serve/phase=work proof=0 start_ns=100 end_ns=200")
			if prof != nil {
				pprof.StopCPUProfile()
				prof.Close()
			}
			fmt.Println(ResidentDone)
		}
		return 0
	}
	// sleepy sleeps a minute without a word.
	helpers["sleepy"] = func() int { time.Sleep(time.Minute); return 0 }
	// oneshot prints a result and exits without the protocol.
	helpers["oneshot"] = func() int { fmt.Println(okLine); return 0 }
}

func residentSpec(t *testing.T, mode string, timeout time.Duration) Spec {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Args: []string{self}, Name: "serve", Timeout: timeout,
		Env: []string{helperEnv + "=resident", residentModeEnv + "=" + mode}}
}

func startHelper(t *testing.T, spec Spec) *Resident {
	t.Helper()
	r, res, err := StartResident(context.Background(), spec)
	if err != nil || r == nil {
		t.Fatalf("StartResident: %v, %+v", err, res.Run)
	}
	t.Cleanup(func() { r.Close(time.Second) })
	return r
}

func value(t *testing.T, res Result, bench, unit string) float64 {
	t.Helper()
	for _, s := range res.Run.Samples {
		if s.Benchmark == bench && s.Unit == unit {
			return s.Value
		}
	}
	t.Fatalf("no %s %s sample in %+v", bench, unit, res.Run.Samples)
	return 0
}

// One process serves many runs, each with its own results and process
// samples, and a CPU profile of the run when asked; closing its stdin
// ends it cleanly.
func TestResidentServesRunAfterRun(t *testing.T) {
	t.Parallel()
	spec := residentSpec(t, "", 10*time.Second)
	spec.CPUProfileFlag = "-cpuprofile" // the flag is not passed: the request names the path
	r := startHelper(t, spec)
	for n := 1; n <= 3; n++ {
		res, err := r.Run(context.Background())
		if err != nil || res.Run.Status != analysis.StatusOK {
			t.Fatalf("run %d: %v %s %s", n, err, res.Run.Status, res.Run.Detail)
		}
		if v := value(t, res, "Serve", "sec/op"); math.Abs(v-float64(n)*1e-6) > 1e-12 {
			t.Errorf("run %d: sec/op %g, want %g (the run's own lines)", n, v, float64(n)*1e-6)
		}
		if w := value(t, res, "process/benchmark=serve", "wall-sec/run"); w < 0.045 || w > 5 {
			t.Errorf("run %d: wall %g s, want the run's 50 ms and not the process's life", n, w)
		}
		// The helper spins 50 ms of its own CPU time; /proc counts it in
		// 10 ms clock ticks, at both ends of the run.
		if c := value(t, res, "process/benchmark=serve", "cpu-sec/run"); c < 0.03 || c > 5 {
			t.Errorf("run %d: cpu %g s, want about the 50 ms spun (less two 10 ms ticks at most)", n, c)
		}
		if len(res.Run.Spans) != 1 || res.Config["goos"] != "linux" {
			t.Errorf("run %d: spans %v, config %v", n, res.Run.Spans, res.Config)
		}
		if len(res.Run.Profiles) != 1 || res.Run.Profiles[0].Kind != analysis.ProfileCPU || len(res.Run.Profiles[0].Data) == 0 {
			t.Errorf("run %d: profiles %+v, want the run's CPU profile", n, res.Run.Profiles)
		}
		if res.Unavailable["perf-counters"] == "" {
			t.Errorf("run %d: Unavailable %v does not say why there are no perf counters", n, res.Unavailable)
		}
	}
	if w := r.Close(5 * time.Second); w != "" {
		t.Errorf("Close: %s", w)
	}
}

// A process that breaks the protocol fails the run it broke, with the
// reason and its stderr, and cannot serve again; one that reports a
// failed run serves the next.
func TestResidentThatBreaksTheProtocolFailsTheRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode   string
		status analysis.Status
		want   []string
		broken bool
	}{
		{"die:2", analysis.StatusCrashed, []string{"exited (exit status 3) during a run", "out of device memory"}, true},
		{"hang:2", analysis.StatusTimedOut, []string{"did not say \"#perfbot done\" within the 1s time limit"}, true},
		{"bogus:2", analysis.StatusCrashed, []string{"broke the resident protocol", "#perfbot finished"}, true},
		{"fail:2", analysis.StatusCrashed, []string{"reported that the run failed: out of device memory"}, false},
		{"silent:2", analysis.StatusNoOutput, []string{"printed no benchmark line"}, false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			r := startHelper(t, residentSpec(t, tc.mode, time.Second))
			if res, err := r.Run(context.Background()); err != nil || res.Run.Status != analysis.StatusOK {
				t.Fatalf("run 1: %v %s %s", err, res.Run.Status, res.Run.Detail)
			}
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Run.Status != tc.status || len(res.Run.Samples) != 0 {
				t.Errorf("run 2: %s with %d samples, want %s and none", res.Run.Status, len(res.Run.Samples), tc.status)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Run.Detail, w) {
					t.Errorf("run 2's detail %q does not say %q", res.Run.Detail, w)
				}
			}
			if got := r.Broken() != ""; got != tc.broken {
				t.Errorf("broken %v (%q), want %v", got, r.Broken(), tc.broken)
			}
			if tc.broken {
				if _, err := r.Run(context.Background()); err == nil {
					t.Error("a broken resident ran again")
				}
				return
			}
			if res, err := r.Run(context.Background()); err != nil || res.Run.Status != analysis.StatusOK || math.Abs(value(t, res, "Serve", "sec/op")-3e-6) > 1e-12 {
				t.Errorf("run 3 after a reported failure: %v %s %s", err, res.Run.Status, res.Run.Detail)
			}
		})
	}
}

// A program that does not implement the protocol, or does not get ready
// in time, fails the run it was started for, saying so.
func TestResidentThatNeverGetsReady(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := StartResident(context.Background(), Spec{Args: []string{self}, Timeout: 5 * time.Second, Env: []string{helperEnv + "=oneshot"}})
	if err != nil || res.Run.Status != analysis.StatusCrashed || !strings.Contains(res.Run.Detail, "does the program implement the resident protocol") {
		t.Errorf("one-shot program: %v %s %q", err, res.Run.Status, res.Run.Detail)
	}
	_, res, err = StartResident(context.Background(), Spec{Args: []string{self}, Timeout: 300 * time.Millisecond, Env: []string{helperEnv + "=sleepy"}})
	if err != nil || res.Run.Status != analysis.StatusTimedOut || !strings.Contains(res.Run.Detail, "did not say \"#perfbot ready\" within the 300ms") {
		t.Errorf("sleeping program: %v %s %q", err, res.Run.Status, res.Run.Detail)
	}
	_, res, err = StartResident(context.Background(), Spec{Args: []string{"/nonexistent/prover"}, Timeout: time.Second})
	if err != nil || res.Run.Status != analysis.StatusCrashed || !strings.Contains(res.Run.Detail, "could not start") {
		t.Errorf("missing program: %v %s %q", err, res.Run.Status, res.Run.Detail)
	}
}
