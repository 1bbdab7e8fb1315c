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
// file next to the worktree. Checkouts of different commits run at once,
// but for the change to the repository's list of worktrees (git worktree
// add, remove and prune), which one lock file per repository serializes:
// git does not guard that list against itself (a prune removes an entry
// another add is making, an add trips over one half made).
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

	from, err := w.worktreeRepo(ctx)
	if err != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), err)
	}
	if w.intact(ctx, from, dir, sha) {
		return dir, nil
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), ctx.Err())
	}
	unlockList, err := Lock(ctx, filepath.Join(w.dataDir, "worktrees", w.key+".lock"))
	if err != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), err)
	}
	defer unlockList()
	if err := w.removeWorktree(ctx, from, dir); err != nil {
		return "", fmt.Errorf("checkout %s: %w", short(sha), err)
	}
	if _, err := w.git(ctx, from, "worktree", "add", "--force", "--detach", "--quiet", dir, sha); err != nil {
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

// worktreeRepo returns the repository Checkout adds worktrees from: the
// mirror, or for a local repository the bare repository under
// dataDir/borrowed whose objects/info/alternates names the local
// repository's object directory, made (or remade, when it names another)
// on first use. It has no refs and no objects of its own: the commits it
// checks out are the local repository's, read in place, and a commit the
// user makes later is visible to it at once.
func (w *Workspace) worktreeRepo(ctx context.Context) (string, error) {
	if w.objects == "" {
		return w.dir, nil
	}
	dir := filepath.Join(w.dataDir, "borrowed", w.key)
	want := w.objects + "\n"
	alternates := filepath.Join(dir, "objects", "info", "alternates")
	if got, err := os.ReadFile(alternates); err == nil && string(got) == want {
		return dir, nil
	}
	unlock, err := Lock(ctx, dir+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if got, err := os.ReadFile(alternates); err == nil && string(got) == want {
		return dir, nil
	}
	// Made in a temporary directory and renamed into place, so that the
	// directory, when present, is whole.
	tmp := dir + ".tmp"
	for _, d := range []string{dir, tmp} {
		if err := os.RemoveAll(d); err != nil {
			return "", err
		}
	}
	if _, err := w.git(ctx, w.dataDir, "init", "--bare", "--quiet", tmp); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("make the checkout repository for %s: %w", w.source, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "objects", "info", "alternates"), []byte(want), 0o644); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("make the checkout repository for %s: %w", w.source, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("make the checkout repository for %s: %w", w.source, err)
	}
	return dir, nil
}

// intact reports whether dir is a worktree of the repository from at sha
// with nothing changed.
func (w *Workspace) intact(ctx context.Context, from, dir, sha string) bool {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return false
	}
	out, err := w.git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir", "HEAD")
	if err != nil {
		return false
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[1] != sha || !w.ownsGitDir(ctx, from, lines[0]) {
		return false
	}
	status, err := w.git(ctx, dir, "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=none")
	return err == nil && len(status) == 0
}

// ownsGitDir reports whether commonDir is the git directory of the
// repository from.
func (w *Workspace) ownsGitDir(ctx context.Context, from, commonDir string) bool {
	out, err := w.git(ctx, from, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return false
	}
	return sameFile(strings.TrimSpace(string(out)), commonDir)
}

// removeWorktree removes the worktree at dir, whatever state it is in,
// and prunes the entries of the repository from whose directories are
// gone.
func (w *Workspace) removeWorktree(ctx context.Context, from, dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		// Unregister it if git knows it; a broken one is simply deleted.
		_, _ = w.git(ctx, from, "worktree", "remove", "--force", "--force", dir)
		if from != w.dir {
			// perfbot before the borrowed repositories added its
			// worktrees to the local repository itself: take back
			// exactly the entry it made there, and nothing else.
			_, _ = w.git(ctx, w.dir, "worktree", "remove", "--force", "--force", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	_, err := w.git(ctx, from, "worktree", "prune")
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
