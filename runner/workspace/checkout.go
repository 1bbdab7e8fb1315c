package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Checkout returns a directory holding a detached worktree of the commit
// sha (a full SHA, as in Commit.SHA): dataDir/worktrees/<key>/<sha>. A
// worktree made by an earlier call is reused when it is intact — HEAD is
// sha and `git status` shows nothing (no changed tracked files, no
// untracked files that are not ignored); otherwise it is removed and added
// again. Stale worktree entries are pruned.
//
// Callers treat the directory as read-only: build outputs belong in
// ${PERFBOT_OUT}, ignored files are tolerated, anything else makes the
// next Checkout start over. Concurrent Checkouts of one commit, in one
// process or several sharing the data directory, are serialized by a lock
// file next to the worktree.
func (w *Workspace) Checkout(ctx context.Context, sha string) (string, error) {
	if !isFullSHA(sha) {
		return "", fmt.Errorf("checkout %q: want a full lowercase commit SHA (from Resolve)", sha)
	}
	if _, ok, err := w.revParse(ctx, sha+"^{commit}"); err != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), err)
	} else if !ok {
		return "", fmt.Errorf("checkout %s: %w: no such commit in %s", short(sha), ErrUnknownRevision, w.source)
	}
	dir := filepath.Join(w.dataDir, "worktrees", w.key, sha)
	unlock, err := Lock(ctx, dir+".lock")
	if err != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), err)
	}
	defer unlock()

	if w.intact(ctx, dir, sha) {
		return dir, nil
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), ctx.Err())
	}
	if err := w.removeWorktree(ctx, dir); err != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), err)
	}
	if _, err := w.git(ctx, w.dir, "worktree", "add", "--force", "--detach", "--quiet", dir, sha); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("checkout %s: %w", short(sha), err)
	}
	if head, err := w.git(ctx, dir, "rev-parse", "HEAD"); err != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), err)
	} else if got := strings.TrimSpace(string(head)); got != sha {
		return "", fmt.Errorf("checkout %s: new worktree %s has HEAD %s", short(sha), dir, got)
	}
	return dir, nil
}

// intact reports whether dir is a worktree of this repository at sha with
// nothing changed.
func (w *Workspace) intact(ctx context.Context, dir, sha string) bool {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return false
	}
	out, err := w.git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir", "HEAD")
	if err != nil {
		return false
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[1] != sha || !w.ownsGitDir(ctx, lines[0]) {
		return false
	}
	status, err := w.git(ctx, dir, "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=none")
	return err == nil && len(status) == 0
}

// ownsGitDir reports whether commonDir is this repository's git directory.
func (w *Workspace) ownsGitDir(ctx context.Context, commonDir string) bool {
	out, err := w.git(ctx, w.dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return false
	}
	return sameFile(strings.TrimSpace(string(out)), commonDir)
}

// removeWorktree removes the worktree at dir, whatever state it is in,
// and prunes worktree entries whose directories are gone.
func (w *Workspace) removeWorktree(ctx context.Context, dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		// Unregister it if git knows it; a broken one is simply deleted.
		_, _ = w.git(ctx, w.dir, "worktree", "remove", "--force", "--force", dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	_, err := w.git(ctx, w.dir, "worktree", "prune")
	return err
}

// isFullSHA reports whether s is a full SHA-1 or SHA-256 object name in
// lowercase hex.
func isFullSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}
