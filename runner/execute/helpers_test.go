package execute

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The tests run real processes: the test binary itself, re-executed with
// helperEnv naming one of the helpers below. TestMain runs the helper and
// exits before any test starts.
const (
	helperEnv  = "PERFBOT_EXECUTE_HELPER"
	pagesEnv   = "PERFBOT_EXECUTE_PAGES"   // how many pages the pages helper touches
	pidFileEnv = "PERFBOT_EXECUTE_PIDFILE" // where a sleeping grandchild writes its pid
	givenEnv   = "PERFBOT_EXECUTE_GIVEN"   // a variable the env test gives the child
	secretEnv  = "PERFBOT_EXECUTE_SECRET"  // a variable of the test process the child must not see
	profileEnv = "PERFBOT_EXECUTE_PROFILE" // the file the profile helper copies to its -cpuprofile path
	memEnv     = "PERFBOT_EXECUTE_MEMPROF" // the file the profile helper copies to its -memprofile path
	failEnv    = "PERFBOT_EXECUTE_FAIL"    // set: the profile helper exits 1 after writing
)

// A benchmark line every helper that should count as ok prints.
const okLine = "BenchmarkHelper 1 1000 ns/op"

var helpers = map[string]func() int{
	// bench prints configuration and benchmark lines with phases, a
	// GOMAXPROCS suffix and a sub-step, as the prover does.
	"bench": func() int {
		fmt.Print(`goos: linux
goarch: amd64
cpu: Test CPU @ 1GHz
gpu: none
backend: cpu
pkg: github.com/perfbot/perfbot/prover
BenchmarkProve/circuit=sha256/backend=cpu/phase=synthesis-2 1 812345678 ns/op 41 page-faults/op
BenchmarkProve/circuit=sha256/backend=cpu/phase=msm_h/step=sort-2 1 401234567 ns/op
BenchmarkProve/circuit=sha256/backend=cpu/phase=total-2 1 2345678901 ns/op 1048576 B/op
`)
		return 0
	},
	// silent prints nothing and exits 0.
	"silent": func() int { return 0 },
	// garbage prints text and benchmark lines that do not parse.
	"garbage": func() int {
		fmt.Print("hello, world\nBenchmarkProve/phase=total one 12 ns/op\nBenchmarkProve/phase=ntt 1 12\n")
		return 0
	},
	// mixed prints one good line between two broken ones.
	"mixed": func() int {
		fmt.Print("BenchmarkProve/phase=ntt x 1 ns/op\nBenchmarkProve/phase=ntt 1 5000 ns/op\nBenchmarkProve/phase=msm_a 1 5000\n")
		return 0
	},
	// exit3 writes to stderr and exits 3.
	"exit3": func() int {
		fmt.Println(okLine) // output does not rescue a failed run
		fmt.Fprintln(os.Stderr, "prove: constraint 17 is not satisfied")
		return 3
	},
	// noisy writes 100 KiB of numbered lines to stderr and exits 1.
	"noisy": func() int {
		for i := range 5000 {
			fmt.Fprintf(os.Stderr, "line %05d %s\n", i, strings.Repeat("x", 9))
		}
		return 1
	},
	// killself dies of SIGKILL.
	"killself": func() int {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
		return 0
	},
	// sleeptree starts a grandchild that writes its pid and sleeps, waits
	// until the pid is written, then sleeps past any test's time limit.
	"sleeptree": func() int {
		if err := startGrandchild("sleep", nil).Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		waitForFile(os.Getenv(pidFileEnv))
		fmt.Fprintln(os.Stderr, "sleeping")
		time.Sleep(time.Minute)
		return 0
	},
	// leavebehind starts a sleeping grandchild and exits 0 without it.
	"leavebehind": func() int {
		if err := startGrandchild("sleep", nil).Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		waitForFile(os.Getenv(pidFileEnv))
		fmt.Println(okLine)
		return 0
	},
	// sleep writes its pid to the pid file and sleeps.
	"sleep": func() int {
		pid := []byte(strconv.Itoa(os.Getpid()))
		if err := os.WriteFile(os.Getenv(pidFileEnv)+".tmp", pid, 0o644); err != nil {
			return 1
		}
		if err := os.Rename(os.Getenv(pidFileEnv)+".tmp", os.Getenv(pidFileEnv)); err != nil {
			return 1
		}
		time.Sleep(time.Minute)
		return 0
	},
	// pages maps and touches as many fresh pages as pagesEnv says.
	"pages": func() int {
		n, err := strconv.Atoi(os.Getenv(pagesEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		size := n * os.Getpagesize()
		mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for i := 0; i < size; i += os.Getpagesize() {
			mem[i] = 1
		}
		fmt.Println(okLine)
		return 0
	},
	// pagestree runs the pages helper as its own child and waits for it,
	// touching no pages of its own.
	"pagestree": func() int {
		cmd := startGrandchild("pages", []string{pagesEnv + "=" + os.Getenv(pagesEnv)})
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(okLine)
		return 0
	},
	// nap sleeps 300 ms, using next to no CPU.
	"nap": func() int {
		time.Sleep(300 * time.Millisecond)
		fmt.Println(okLine)
		return 0
	},
	// burn spins until the process has used 200 ms of CPU time.
	"burn": func() int {
		x := 1.0
		for cpuTime() < 200*time.Millisecond {
			for range 100000 {
				x = x*1.0000001 + 1e-9
			}
		}
		if x < 0 {
			fmt.Println("never")
		}
		fmt.Println(okLine)
		return 0
	},
	// affinity reports the CPUs it may run on as the "affinity"
	// configuration line.
	"affinity": func() int {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var cpus []string
		for _, c := range cpuList(set) {
			cpus = append(cpus, strconv.Itoa(c))
		}
		fmt.Printf("affinity: %s\n%s\n", strings.Join(cpus, ","), okLine)
		return 0
	},
	// profile reports its arguments as the "args" configuration line
	// and, given -cpuprofile PATH (or -memprofile PATH) pairs and
	// profileEnv (memEnv), copies the file profileEnv (memEnv) names to
	// PATH, as a benchmark writes its profile; it exits 1 after that when
	// failEnv is set.
	"profile": func() int {
		args := os.Args[1:]
		fmt.Printf("args: [%s]\n%s\n", strings.Join(args, " "), okLine)
		for i := 0; i+1 < len(args); i += 2 {
			src := map[string]string{"-cpuprofile": os.Getenv(profileEnv), "-memprofile": os.Getenv(memEnv)}[args[i]]
			if src == "" {
				continue
			}
			data, err := os.ReadFile(src)
			if err == nil {
				err = os.WriteFile(args[i+1], data, 0o644)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		if os.Getenv(failEnv) != "" {
			fmt.Fprintln(os.Stderr, "failing after writing the profile")
			return 1
		}
		return 0
	},
	// env reports the names of its environment variables and the values
	// of the given and the secret one as configuration lines.
	"env": func() int {
		var names []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		slices.Sort(names)
		fmt.Printf("envnames: %s\ngiven: %s\nsecret: %s\nvisible: %s\norder: %s\n%s\n",
			strings.Join(names, ","), os.Getenv(givenEnv), os.Getenv(secretEnv),
			os.Getenv(EnvVisibleDevices), os.Getenv(EnvDeviceOrder), okLine)
		return 0
	},
}

// startGrandchild returns a command that runs helper name with the pid
// file and the extra variables, its stderr going to this process's.
func startGrandchild(name string, extra []string) *exec.Cmd {
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = append([]string{helperEnv + "=" + name, pidFileEnv + "=" + os.Getenv(pidFileEnv)}, extra...)
	if d := os.Getenv("GOCOVERDIR"); d != "" { // a -cover build: see coverEnv
		cmd.Env = append(cmd.Env, "GOCOVERDIR="+d)
	}
	cmd.Stderr = os.Stderr
	return cmd
}

// waitForFile waits up to 10 s for path to exist.
func waitForFile(path string) {
	for range 1000 {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
