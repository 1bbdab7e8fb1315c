// Package workspacetest makes real git repositories for tests: commits
// with fixed authors and dates, made with the git command in a test's
// temporary directory, for the tests of workspace and of its users.
package workspacetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Epoch is the author and committer date of a Repo's first commit; each
// later commit is an hour after the one before.
var Epoch = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

// A Repo is a git repository in a test's temporary directory.
type Repo struct {
	// Dir is the repository's top directory (for a bare repository, the
	// repository itself).
	Dir string
	// Next is the date the next commit gets.
	Next time.Time

	home string
}

// New makes an empty non-bare repository whose initial branch is main.
func New(t testing.TB) *Repo {
	t.Helper()
	r := &Repo{Dir: filepath.Join(t.TempDir(), "repo"), Next: Epoch, home: t.TempDir()}
	r.Git(t, "init", "--quiet", "--initial-branch=main", r.Dir)
	return r
}

// NewBare makes an empty bare repository whose initial branch is main.
func NewBare(t testing.TB) *Repo {
	t.Helper()
	r := &Repo{Dir: filepath.Join(t.TempDir(), "repo.git"), Next: Epoch, home: t.TempDir()}
	r.Git(t, "init", "--quiet", "--bare", "--initial-branch=main", r.Dir)
	return r
}

// Git runs git in the repository with a fixed identity and the date Next
// and returns its trimmed standard output; it fails the test on error.
func (r *Repo) Git(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	if _, err := os.Stat(r.Dir); err == nil {
		cmd.Dir = r.Dir
	}
	date := r.Next.Format(time.RFC3339)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + r.home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Ada Author", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Cy Committer", "GIT_COMMITTER_EMAIL=cy@example.com",
		"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date,
		"LC_ALL=C",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Commit writes files (path → contents; "" deletes the path), commits
// everything with message msg on the current branch and returns the new
// commit's SHA. The commit's author and committer date is Next, which
// then moves an hour on.
func (r *Repo) Commit(t testing.TB, msg string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if body == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	r.Git(t, "add", "--all")
	r.Git(t, "commit", "--quiet", "--allow-empty", "-m", msg)
	r.Next = r.Next.Add(time.Hour)
	return r.Git(t, "rev-parse", "HEAD")
}

// URL returns the repository's file:// URL.
func (r *Repo) URL() string {
	return "file://" + filepath.ToSlash(r.Dir)
}
