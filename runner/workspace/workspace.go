// Package workspace gives the runner the revisions it measures: it opens a
// git repository (a local clone used in place, or a mirror of a clone URL
// kept under perfbot's data directory), resolves revisions to commits,
// reads files at a commit, lists first-parent ranges for bisection and
// checks commits out into detached worktrees, one directory per commit.
//
// In flows a repository and revision names; out flow Commits, file
// contents and worktree directories. Everything is done by the git
// command (git 2.31 or newer) run with an explicit environment: no system
// or user configuration, no prompts, no hooks. A local repository's
// working tree, index, branches and worktree list are never touched: its
// revisions resolve there, and its commits are checked out from a bare
// repository of perfbot's own that borrows its objects (git's alternates),
// so `git worktree list` in the user's clone never shows perfbot's
// checkouts and deleting the data directory leaves nothing behind.
//
// Layout under the data directory:
//
//	home/                      HOME for git (empty, so no user config applies)
//	mirrors/<name>-<hash>      bare mirrors of clone URLs (+ .lock)
//	borrowed/<name>-<hash>     for a local repository: a bare repository
//	                           whose objects are the local one's (+ .lock);
//	                           its worktrees are perfbot's checkouts
//	worktrees/<key>/<sha>      one detached worktree per commit (+ .lock)
package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Errors callers branch on; returned errors wrap them (use errors.Is).
var (
	// ErrNotRepository means the source given to Open is a path that is
	// not a git repository.
	ErrNotRepository = errors.New("not a git repository")
	// ErrUnknownRevision means a revision names no commit in the
	// repository, or is not a revision at all.
	ErrUnknownRevision = errors.New("unknown revision")
	// ErrFileNotFound means a path does not exist at a commit.
	ErrFileNotFound = errors.New("file not found")
	// ErrNotAncestor means the good end of a range is not an ancestor
	// of its bad end.
	ErrNotAncestor = errors.New("not an ancestor")
)

// A Commit is a resolved revision.
type Commit struct {
	// SHA is the commit's full hexadecimal object name.
	SHA string
	// Parents are the parents' full SHAs, the first parent first; none
	// for a root commit.
	Parents []string
	// AuthorTime is the author date, in UTC, to the second.
	AuthorTime time.Time
	// Subject is the first paragraph of the message, lines joined by
	// spaces (git's %s).
	Subject string
}

// Short returns the first 12 characters of the SHA.
func (c Commit) Short() string { return short(c.SHA) }

// A Workspace is an opened repository and the data directory that holds
// its mirror (for a clone URL) and worktrees. Its methods are safe for
// concurrent use, and several processes may share one data directory.
type Workspace struct {
	source  string // as shown to people: the path, or the URL without a password
	url     string // the clone URL of a mirror; "" for a local repository
	dir     string // where git runs: the local repository's top directory, or the mirror
	objects string // a local repository's object directory; "" for a mirror
	dataDir string
	home    string
	key     string
}

// Open opens the repository at source, keeping perfbot's files under
// dataDir (created if needed).
//
// A source that is a path to a non-bare repository (or a directory in
// one) is used in place: revisions resolve there, and Checkout adds
// worktrees from a bare repository under dataDir/borrowed that reads the
// local repository's objects, so nothing is registered in the local
// repository. A clone URL (https://…, ssh://…, git@host:path, file://…) or
// a path to a bare repository is mirrored into dataDir/mirrors: cloned
// with `git clone --mirror` the first time and updated with
// `git fetch --prune` on every later Open, so all its branches, tags and
// other refs (GitHub's refs/pull/N/head) can be resolved.
//
// A path that is not a git repository gives an error wrapping
// ErrNotRepository.
func Open(ctx context.Context, source, dataDir string) (*Workspace, error) {
	if source == "" {
		return nil, fmt.Errorf("open repository: no source given; pass a local repository's directory or a clone URL")
	}
	if dataDir == "" {
		return nil, fmt.Errorf("open repository %s: no data directory given", source)
	}
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: data directory: %w", source, err)
	}
	w := &Workspace{dataDir: dataDir, home: filepath.Join(dataDir, "home")}
	if err := os.MkdirAll(w.home, 0o755); err != nil {
		return nil, fmt.Errorf("open repository %s: %w", source, err)
	}
	if isURL(source) {
		if err := w.openMirror(ctx, source); err != nil {
			return nil, err
		}
		return w, nil
	}
	if err := w.openPath(ctx, source); err != nil {
		return nil, err
	}
	return w, nil
}

// notRepo returns the error for a source path that holds no repository.
func notRepo(source, why string) error {
	return fmt.Errorf("open repository %s: %w: %s; pass the directory of a git clone, "+
		"a bare repository, or a clone URL (https://…, git@host:owner/repo.git, file:///path/repo.git)",
		source, ErrNotRepository, why)
}

func (w *Workspace) openPath(ctx context.Context, source string) error {
	abs, err := filepath.Abs(source)
	if err != nil {
		return fmt.Errorf("open repository %s: %w", source, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return notRepo(source, "no such directory")
		}
		return fmt.Errorf("open repository %s: %w", source, err)
	}
	if !fi.IsDir() {
		return notRepo(source, "not a directory")
	}
	out, err := w.git(ctx, abs, "rev-parse", "--is-bare-repository", "--is-inside-git-dir",
		"--path-format=absolute", "--git-common-dir")
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("open repository %s: %w", source, err)
		}
		if code := exitCode(err); code == 128 {
			return notRepo(source, "git finds no repository there")
		}
		return fmt.Errorf("open repository %s: %w", source, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		return fmt.Errorf("open repository %s: unexpected git rev-parse output %q", source, out)
	}
	bare, inGitDir, commonDir := lines[0] == "true", lines[1] == "true", lines[2]
	if bare {
		return w.openMirror(ctx, abs)
	}
	if inGitDir {
		return notRepo(source, fmt.Sprintf("it is a repository's git directory; pass the repository's top directory (%s)", filepath.Dir(commonDir)))
	}
	out, err = w.git(ctx, abs, "rev-parse", "--path-format=absolute", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("open repository %s: %w", source, err)
	}
	w.dir = strings.TrimSpace(string(out))
	w.source = w.dir
	w.objects = filepath.Join(commonDir, "objects")
	w.key = keyName(filepath.Base(w.dir), commonDir)
	return nil
}

func (w *Workspace) openMirror(ctx context.Context, cloneURL string) error {
	if strings.HasPrefix(cloneURL, "-") {
		return fmt.Errorf("open repository %q: a clone URL cannot begin with '-'", cloneURL)
	}
	w.url = cloneURL
	w.source = redact(cloneURL)
	w.key = keyName(repoBase(cloneURL), stripUserinfo(cloneURL))
	w.dir = filepath.Join(w.dataDir, "mirrors", w.key)
	unlock, err := Lock(ctx, w.dir+".lock")
	if err != nil {
		return fmt.Errorf("open repository %s: %w", w.source, err)
	}
	defer unlock()
	if out, err := w.git(ctx, w.dir, "rev-parse", "--is-bare-repository"); err == nil && strings.TrimSpace(string(out)) == "true" {
		if err := w.fetchLocked(ctx); err != nil {
			return fmt.Errorf("open repository %s: %w", w.source, err)
		}
		return nil
	}
	// No usable mirror: clone into a temporary directory and rename it
	// into place, so that a mirror directory always holds a whole clone.
	tmp := w.dir + ".tmp"
	for _, d := range []string{w.dir, tmp} {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("open repository %s: %w", w.source, err)
		}
	}
	if _, err := w.git(ctx, w.dataDir, "clone", "--mirror", "--quiet", "--", cloneURL, tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("open repository %s: mirror clone: %w", w.source, err)
	}
	if err := os.Rename(tmp, w.dir); err != nil {
		return fmt.Errorf("open repository %s: %w", w.source, err)
	}
	return nil
}

// Fetch updates a mirror from its clone URL (`git fetch --prune`); Open
// already did so once. For a local repository it does nothing: perfbot
// never changes a repository it does not own, so fetch there yourself.
func (w *Workspace) Fetch(ctx context.Context) error {
	if w.url == "" {
		return nil
	}
	unlock, err := Lock(ctx, w.dir+".lock")
	if err != nil {
		return fmt.Errorf("fetch %s: %w", w.source, err)
	}
	defer unlock()
	if err := w.fetchLocked(ctx); err != nil {
		return fmt.Errorf("fetch %s: %w", w.source, err)
	}
	return nil
}

func (w *Workspace) fetchLocked(ctx context.Context) error {
	// The URL may carry a credential that was rotated since the clone.
	if _, err := w.git(ctx, w.dir, "remote", "set-url", "origin", w.url); err != nil {
		return err
	}
	_, err := w.git(ctx, w.dir, "fetch", "--prune", "--quiet", "origin")
	return err
}

// Source returns the repository as given to Open, resolved: the local
// repository's top directory, or the clone URL without its password.
func (w *Workspace) Source() string { return w.source }

// Mirrored reports whether the workspace uses a mirror of a clone URL
// rather than a local repository in place.
func (w *Workspace) Mirrored() bool { return w.url != "" }

// GitDir returns the directory git runs in for this repository: the
// local repository's top directory or the mirror's (bare) directory.
func (w *Workspace) GitDir() string { return w.dir }

// DataDir returns the absolute data directory given to Open.
func (w *Workspace) DataDir() string { return w.dataDir }

// Key returns the repository's name in the data directory: a readable
// name and a hash of the repository's location, e.g. "perfbot-1a2b3c4d5e6f".
func (w *Workspace) Key() string { return w.key }

// isURL reports whether source is a clone URL rather than a path: it has
// a scheme (https://, ssh://, file://) or is scp-like (host:path, with a
// colon before any slash), as git itself decides.
func isURL(source string) bool {
	if strings.Contains(source, "://") {
		return true
	}
	colon := strings.IndexByte(source, ':')
	slash := strings.IndexByte(source, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

// redact hides the password of a URL's user information.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// stripUserinfo removes user information from a URL with a scheme, so
// that a rotated credential keeps the same mirror.
func stripUserinfo(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.User != nil {
		u.User = nil
		return u.String()
	}
	return s
}

// repoBase returns the last path element of a clone URL or path, without
// a .git suffix.
func repoBase(s string) string {
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSuffix(s, ".git")
}

// keyName returns a directory name: name made safe, a dash and the first
// 12 hex digits of the SHA-256 of identity.
func keyName(name, identity string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	safe := strings.TrimLeft(b.String(), ".")
	if len(safe) > 40 {
		safe = safe[:40]
	}
	if safe == "" {
		safe = "repo"
	}
	sum := sha256.Sum256([]byte(identity))
	return safe + "-" + hex.EncodeToString(sum[:6])
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
