// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// allPackages is every Debian package test-tools.sh installs, in its order.
const allPackages = "postgresql valgrind chromium systemd libbenchmark-dev hyperfine librust-criterion-dev cargo g++ python3"

// fakeAptGet stands in for apt-get on a machine where nothing can be
// uninstalled: it logs its arguments and, when "installing", lays down
// the file or command each package provides (under PERFBOT_TOOLS_ROOT and
// the PATH directory), unless FAKE_APT_BROKEN is set.
const fakeAptGet = `#!/bin/bash
echo "$*" >> "$FAKE_APT_LOG"
[ "$1" = install ] || exit 0
[ -n "${FAKE_APT_BROKEN:-}" ] && exit 0
for p in "$@"; do
  case $p in
    -*) ;;
    postgresql) mkdir -p "$PERFBOT_TOOLS_ROOT/usr/lib/postgresql/15/bin"; echo > "$PERFBOT_TOOLS_ROOT/usr/lib/postgresql/15/bin/initdb" ;;
    libbenchmark-dev) mkdir -p "$PERFBOT_TOOLS_ROOT/usr/include/benchmark"; echo > "$PERFBOT_TOOLS_ROOT/usr/include/benchmark/benchmark.h" ;;
    librust-criterion-dev) mkdir -p "$PERFBOT_TOOLS_ROOT/usr/share/cargo/registry/criterion-0.3.6" ;;
    systemd) echo '#!/bin/true' > "$FAKE_BIN/systemd-analyze"; chmod +x "$FAKE_BIN/systemd-analyze" ;;
    *) echo '#!/bin/true' > "$FAKE_BIN/$p"; chmod +x "$FAKE_BIN/$p" ;;
  esac
done
`

// toolsEnv is a fresh machine as far as this one allows: an empty HOME,
// an empty tree for the script's file checks, and a PATH of the few
// programs the script itself runs (plus go unless noGo), so every tool
// make test needs is absent. It returns the environment and the PATH
// directory.
func toolsEnv(t *testing.T, noGo bool, extra ...string) ([]string, string) {
	t.Helper()
	bin := t.TempDir()
	progs := []string{"bash", "id", "tr", "sed", "mkdir", "chmod", "true"}
	if !noGo {
		progs = append(progs, "go")
	}
	for _, p := range progs {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin, "HOME=" + t.TempDir(), "PERFBOT_TOOLS_ROOT=" + t.TempDir(), "FAKE_BIN=" + bin}
	return append(env, extra...), bin
}

func runScript(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash: the script is a bash script")
	}
	cmd := exec.Command(bash, append([]string{"test-tools.sh"}, args...)...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestTestToolsNamesEveryMissingToolAndTheCommandThatInstallsIt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		env  string
	}{{"--check", []string{"--check"}, ""}, {"PERFBOT_INSTALL=0", nil, "PERFBOT_INSTALL=0"}} {
		env, _ := toolsEnv(t, false)
		if c.env != "" {
			env = append(env, c.env)
		}
		stdout, stderr, code := runScript(t, env, c.args...)
		if code != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want 1 and nothing on stdout", c.name, code, stdout)
		}
		if !strings.Contains(stderr, "missing: "+allPackages+"\n") {
			t.Errorf("%s: stderr %q; want every package named as missing", c.name, stderr)
		}
		if !strings.Contains(stderr, "apt-get install -y --no-install-recommends "+allPackages+"\n") {
			t.Errorf("%s: stderr %q; want the one command that installs them", c.name, stderr)
		}
	}
}

func TestTestToolsInstallsWhatIsMissingAndChecksAgain(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("not root: test-tools.sh installs only as root (or with sudo -n), so it would only print the command")
	}
	for _, broken := range []bool{false, true} {
		log := filepath.Join(t.TempDir(), "apt.log")
		extra := []string{"FAKE_APT_LOG=" + log}
		if broken {
			extra = append(extra, "FAKE_APT_BROKEN=1")
		}
		env, bin := toolsEnv(t, false, extra...)
		if err := os.WriteFile(filepath.Join(bin, "apt-get"), []byte(fakeAptGet), 0o755); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runScript(t, env)
		calls, err := os.ReadFile(log)
		if err != nil {
			t.Fatalf("broken=%v: apt-get never ran: %v (stderr %q)", broken, err, stderr)
		}
		if want := "update -qq\ninstall -y -qq --no-install-recommends " + allPackages + "\n"; string(calls) != want {
			t.Errorf("broken=%v: apt-get ran with\n%s\nwant\n%s", broken, calls, want)
		}
		if !broken && (code != 0 || !strings.Contains(stdout, "installed "+allPackages)) {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0 and the packages installed", code, stdout, stderr)
		}
		if broken && (code != 1 || !strings.Contains(stderr, "still missing: "+allPackages)) {
			t.Errorf("apt-get that installs nothing: exit %d, stderr %q; want 1 naming what is still missing", code, stderr)
		}
	}
}

func TestTestToolsSaysGoIsMissing(t *testing.T) {
	t.Parallel()
	env, _ := toolsEnv(t, true)
	_, stderr, code := runScript(t, env, "--check")
	if code != 1 || !strings.Contains(stderr, "no go in PATH") {
		t.Errorf("exit %d, stderr %q; want 1 saying go is missing", code, stderr)
	}
}

func TestTestToolsRefusesAnUnknownArgument(t *testing.T) {
	t.Parallel()
	env, _ := toolsEnv(t, false)
	_, stderr, code := runScript(t, env, "--install")
	if code != 2 || !strings.Contains(stderr, "usage:") {
		t.Errorf("exit %d, stderr %q; want 2 with the usage", code, stderr)
	}
}
