package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// gitPassEnv names the parent's environment variables that git may see:
// what it needs to reach a remote (ssh agent, proxies, CA bundles), never
// the parent's git configuration or repository overrides (GIT_DIR,
// GIT_WORK_TREE, GIT_INDEX_FILE, …).
var gitPassEnv = []string{
	"SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO",
}

// gitConfig is passed with -c to every git command: no hooks from the
// repository being measured (worktree add would run post-checkout), no
// file-system monitor daemon, no background maintenance outliving the
// command.
var gitConfig = []string{
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"gc.autoDetach=false",
	"maintenance.autoDetach=false",
	"advice.detachedHead=false",
	"log.showSignature=false",
}

// maxStderr bounds how much of git's stderr an error carries.
const maxStderr = 4 << 10

// A gitError is a git command that exited with an error.
type gitError struct {
	args   []string
	code   int // exit code, -1 when git did not run or was killed
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.args, " "), e.err)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode returns the exit code of the git command behind err, or -1.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// gitEnv returns the explicit environment git runs with: PATH, a HOME of
// perfbot's own (so no user configuration applies), no system or global
// configuration, no terminal prompts, the C locale (stable messages), ssh
// in batch mode unless the caller configured ssh, and gitPassEnv.
func gitEnv(home string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C",
		"LANG=C",
	}
	for _, name := range gitPassEnv {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	if _, ok := os.LookupEnv("GIT_SSH_COMMAND"); !ok {
		if _, ok := os.LookupEnv("GIT_SSH"); !ok {
			env = append(env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
		}
	}
	return env
}

// git runs git in dir with the workspace's environment and returns its
// standard output. An error carries git's arguments, exit status and
// standard error.
func (w *Workspace) git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return runGit(ctx, w.home, dir, args...)
}

func runGit(ctx context.Context, home, dir string, args ...string) ([]byte, error) {
	full := make([]string, 0, 2*len(gitConfig)+len(args))
	for _, c := range gitConfig {
		full = append(full, "-c", c)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = gitEnv(home)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > maxStderr {
			msg = "…" + msg[len(msg)-maxStderr:]
		}
		return stdout.Bytes(), &gitError{args: args, code: code, stderr: msg, err: err}
	}
	return stdout.Bytes(), nil
}
