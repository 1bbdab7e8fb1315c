// Package deploy holds the runner kit: systemd units and the GPU host's
// install script (docs/gpu-runner.md). Its tests check the units with
// systemd-analyze verify, run each unit's command line against a real
// perfbot binary and install the kit under a temporary directory.
package deploy

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/workspace"
)

// perfbotBinary builds cmd/perfbot once per test into dir.
func perfbotBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "perfbot")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/perfbot").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// needSystemd skips without systemd-analyze unless PERFBOT_REQUIRE_SYSTEMD
// is set (make test sets it, and .ci/run installs systemd).
func needSystemd(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		if os.Getenv("PERFBOT_REQUIRE_SYSTEMD") != "" {
			t.Fatal("PERFBOT_REQUIRE_SYSTEMD is set and systemd-analyze is not on PATH: apt-get install systemd")
		}
		t.Skip("no systemd-analyze on this machine (apt-get install systemd); PERFBOT_REQUIRE_SYSTEMD=1 makes this a failure")
	}
}

// verify runs systemd-analyze verify on units and returns what it says:
// rc 0 and no output is a clean unit (an unknown key or a bad value only
// prints a warning and still exits 0).
func verify(t *testing.T, units ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("systemd-analyze", append([]string{"verify"}, units...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// installUnits copies the units to dir with ExecStart at bin.
func installUnits(t *testing.T, dir, bin string) {
	t.Helper()
	for _, name := range []string{"perfbot-serve.service", "perfbot-worker@.service"} {
		data, err := os.ReadFile(filepath.Join("systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), "/usr/local/bin/perfbot", bin))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnitsPassSystemdAnalyzeVerify(t *testing.T) {
	needSystemd(t)
	dir := t.TempDir()
	installUnits(t, dir, perfbotBinary(t, dir))
	for _, unit := range []string{"perfbot-serve.service", "perfbot-worker@0.service", "perfbot-worker@3.service"} {
		if out, err := verify(t, filepath.Join(dir, unit)); err != nil || out != "" {
			t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
		}
	}
	// The check catches what it is for: a misspelt key only warns.
	bad := filepath.Join(dir, "bad.service")
	if err := os.WriteFile(bad, []byte("[Service]\nExecStart=/bin/true\nRestartSecs=5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _ := verify(t, bad); !strings.Contains(out, "RestartSecs") {
		t.Errorf("verify of a unit with a misspelt key says %q, want a warning naming it", out)
	}
}

// unit is what the test reads of a unit file.
type unit struct {
	execStart []string
	env       map[string]string
}

var envRef = regexp.MustCompile(`\$\{(\w+)\}`)

// readUnit reads a unit's ExecStart and Environment= lines, instance %i
// set to instance.
func readUnit(t *testing.T, path, instance string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{env: map[string]string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.ReplaceAll(sc.Text(), "%i", instance)
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			k, val, _ := strings.Cut(v, "=")
			u.env[k] = val
		}
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			u.execStart = strings.Fields(v)
		}
	}
	for i, a := range u.execStart {
		u.execStart[i] = envRef.ReplaceAllStringFunc(a, func(ref string) string {
			return u.env[envRef.FindStringSubmatch(ref)[1]]
		})
	}
	return u
}

func TestUnitCommandLinesAreOnesPerfbotAccepts(t *testing.T) {
	dir := t.TempDir()
	bin := perfbotBinary(t, dir)
	installUnits(t, dir, bin)
	serve := readUnit(t, filepath.Join(dir, "perfbot-serve.service"), "")
	worker := readUnit(t, filepath.Join(dir, "perfbot-worker@.service"), "1")
	if len(serve.execStart) != 2 || serve.execStart[1] != "serve" {
		t.Errorf("serve ExecStart %q", serve.execStart)
	}
	want := []string{bin, "worker", "--queue", "gpu", "--data-dir", "/var/lib/perfbot/gpu1"}
	if strings.Join(worker.execStart, " ") != strings.Join(want, " ") {
		t.Errorf("worker@1 ExecStart %q, want %q", worker.execStart, want)
	}
	if worker.env["CUDA_VISIBLE_DEVICES"] != "1" || worker.env["CUDA_DEVICE_ORDER"] != "PCI_BUS_ID" {
		t.Errorf("worker@1 environment %v: want CUDA_VISIBLE_DEVICES=1 in PCI bus order", worker.env)
	}
	for _, u := range []unit{serve, worker} {
		// --help after the unit's own flags: perfbot parses them all
		// (an unknown flag is exit 2) and stops before any database.
		cmd := exec.Command(u.execStart[0], append(u.execStart[1:], "--help")...)
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Usage:") {
			t.Errorf("%q --help: %v\n%s", u.execStart, err, out)
		}
	}
	bogus := exec.Command(bin, "worker", "--queue", "gpu", "--no-such-flag", "--help")
	if err := bogus.Run(); err == nil {
		t.Error("perfbot accepted --no-such-flag: this test would not notice a unit's bad flag")
	}
}

// install runs the install script into root with path as PATH.
func install(t *testing.T, root, path string) (string, error) {
	t.Helper()
	cmd := exec.Command("./install-gpu-host.sh", "--prefix", filepath.Join(root, "usr"), "--etc", filepath.Join(root, "etc"),
		"--units", filepath.Join(root, "units"), "--no-cuda", "--no-user", "--no-reload")
	cmd.Env = append(os.Environ(), "PATH="+path)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestInstallScriptInstallsTheKitAndKeepsAnEditedConfig(t *testing.T) {
	root := t.TempDir()
	out, err := install(t, root, os.Getenv("PATH"))
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	perfbot := filepath.Join(root, "usr", "bin", "perfbot")
	if v, err := exec.Command(perfbot, "version").Output(); err != nil || !strings.HasPrefix(string(v), "perfbot ") {
		t.Errorf("installed perfbot version: %v %q", err, v)
	}
	if target, err := os.Readlink(perfbot); err != nil || target != filepath.Join(root, "usr", "lib", "perfbot", "perfbot") {
		t.Errorf("bin/perfbot links to %q (%v), want lib/perfbot/perfbot, where the CUDA library goes beside it", target, err)
	}
	env := filepath.Join(root, "etc", "perfbot.env")
	if fi, err := os.Stat(env); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("perfbot.env: %v, mode %v; want 0600 (it holds the token)", err, fi.Mode())
	}
	unit, err := os.ReadFile(filepath.Join(root, "units", "perfbot-worker@.service"))
	if err != nil || !strings.Contains(string(unit), "ExecStart="+perfbot+" worker") ||
		!strings.Contains(string(unit), "EnvironmentFile="+env) {
		t.Errorf("installed worker unit does not start %s with %s:\n%s", perfbot, env, unit)
	}
	// The worker's build steps run go: the unit's PATH starts with the
	// directory the script found it in (systemd's default has no
	// /usr/local/go/bin).
	goPath, _ := exec.LookPath("go")
	if !strings.Contains(string(unit), "\nEnvironment=PATH="+filepath.Dir(goPath)+":") {
		t.Errorf("installed worker unit's PATH does not start with go's directory %s:\n%s", filepath.Dir(goPath), unit)
	}
	if _, err := exec.LookPath("systemd-analyze"); err == nil && !strings.Contains(out, "installed the units") {
		t.Errorf("install output %q", out)
	}

	// Run again over an edited config: the config stays, the rest is
	// installed again.
	edited := "GITHUB_TOKEN=ghp_mine\n"
	if err := os.WriteFile(env, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := install(t, root, os.Getenv("PATH")); err != nil || strings.Contains(out, "wrote ") {
		t.Fatalf("second install: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(env); string(got) != edited {
		t.Errorf("second install changed the edited perfbot.env to %q", got)
	}
}

func TestInstallScriptRefusesAnOldGo(t *testing.T) {
	root := t.TempDir()
	shims := filepath.Join(root, "bin")
	if err := os.Mkdir(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	// A go that says it is 1.20, before everything else on PATH.
	shim := "#!/bin/sh\n[ \"$1 $2\" = 'env GOVERSION' ] && { echo go1.20.14; exit 0; }\necho shim; exit 1\n"
	if err := os.WriteFile(filepath.Join(shims, "go"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := install(t, root, shims+":"+os.Getenv("PATH"))
	if err == nil || !strings.Contains(out, "go 1.20.14 is older than go.mod's") || !strings.Contains(out, "install Go") {
		t.Errorf("install with go 1.20: %v\n%s\nwant a refusal that says which Go to install", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "usr")); !os.IsNotExist(err) {
		t.Errorf("a refused install left %s behind (%v)", filepath.Join(root, "usr"), err)
	}
	// No go at all.
	if _, lookErr := exec.LookPath("/usr/bin/go"); lookErr == nil {
		t.Skip("/usr/bin/go exists: cannot hide Go from the script")
	}
	out, err = install(t, root, "/usr/bin:/bin")
	if err == nil || !strings.Contains(out, "no go on PATH") {
		t.Errorf("install without go: %v\n%s", err, out)
	}
}

func TestGPUExampleConfigParses(t *testing.T) {
	data, err := os.ReadFile("perfbot-gpu.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := runner.ParseConfig(data)
	if err != nil {
		t.Fatalf("deploy/perfbot-gpu.example.yml: %v", err)
	}
	if len(cfg.Benchmarks) != 1 || cfg.Count != 10 || cfg.MaxCount != 60 || len(cfg.Build) != 2 || !cfg.Benchmarks[0].Resident {
		t.Errorf("config %+v", cfg)
	}
	if args := strings.Join(cfg.Benchmarks[0].Args, " "); !strings.Contains(args, "--backend gpu") || !strings.Contains(args, "--count 5") {
		t.Errorf("benchmark args %q", args)
	}
	// Both steps are declared, and the CUDA one builds the library alone.
	goStep, cudaStep := cfg.Build[0], cfg.Build[1]
	if !goStep.Declared() || !slices.Equal(goStep.Outputs, []string{"perfbot"}) || !slices.Contains(goStep.Inputs, "cuda/perfbot_cuda.h") {
		t.Errorf("Go step %+v; want perfbot made from inputs that hold cuda/perfbot_cuda.h", goStep)
	}
	if !cudaStep.Declared() || !slices.Equal(cudaStep.Run, []string{"make", "cuda-lib", "BUILD=${PERFBOT_OUT}"}) ||
		!slices.Equal(cudaStep.Inputs, []string{"cuda/", "Makefile"}) || !slices.Equal(cudaStep.Outputs, []string{"libperfbot_cuda.so"}) {
		t.Errorf("CUDA step %+v; want make cuda-lib from cuda/ and Makefile, making libperfbot_cuda.so", cudaStep)
	}
}

// TestGPUExampleGoStepBuildsFromItsDeclaredInputsAlone builds the
// example's perfbot step as a comparison would, in a directory of its
// declared inputs alone, from this repository's HEAD (committed files,
// not the working tree): a declaration that leaves out a file the Go
// build reads (as "everything but cuda/" leaves out the header cgo
// includes) fails here, not in a comparison. Both steps' inputs must
// resolve at HEAD; the CUDA step needs nvcc and is not built.
func TestGPUExampleGoStepBuildsFromItsDeclaredInputsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds perfbot")
	}
	data, err := os.ReadFile("perfbot-gpu.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := runner.ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ws, err := workspace.Open(ctx, "..", t.TempDir())
	if errors.Is(err, workspace.ErrNotRepository) {
		t.Skip("not in a git repository (an unpacked source tree): ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	head, err := ws.Resolve(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var b runner.Builder
	if err := b.Check(ctx, ws, head, cfg); err != nil {
		t.Fatalf("the example's inputs at HEAD (%s): %v", head.Short(), err)
	}
	goOnly := *cfg
	goOnly.Build = cfg.Build[:1]
	res, err := b.Build(ctx, ws, head, &goOnly)
	if err != nil || res.Failed {
		t.Fatalf("the example's Go step at HEAD (%s): %v %s\n%s", head.Short(), err, res.Reason, res.Output)
	}
	if out, err := exec.Command(filepath.Join(res.OutDir, "perfbot"), "--help").CombinedOutput(); err != nil {
		t.Errorf("the perfbot it built: %v\n%s", err, out)
	}
}
