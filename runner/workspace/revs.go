package workspace

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// commitFormat is the git log format parseCommits reads, one record per
// commit, NUL-terminated by -z.
const commitFormat = "--format=%H%n%P%n%at%n%s"

// Resolve resolves rev (a branch, tag, full or abbreviated SHA, HEAD~1,
// origin/main, refs/pull/7/head, anything git rev-parse takes) to a
// commit. An unknown revision gives an error wrapping ErrUnknownRevision
// that names it; so does a rev that begins with "-", which git would read
// as an option.
//
// In a mirror, branches are refs/heads/…, so "origin/x" that names nothing
// is retried as the mirror's branch x.
func (w *Workspace) Resolve(ctx context.Context, rev string) (Commit, error) {
	sha, err := w.resolveSHA(ctx, rev)
	if err != nil {
		return Commit{}, err
	}
	cs, err := w.log(ctx, "-1", "--no-walk", sha)
	if err != nil {
		return Commit{}, fmt.Errorf("resolve %q: %w", rev, err)
	}
	if len(cs) != 1 {
		return Commit{}, fmt.Errorf("resolve %q: git log gave %d commits for %s", rev, len(cs), sha)
	}
	return cs[0], nil
}

// resolveSHA returns the full SHA of the commit rev names.
func (w *Workspace) resolveSHA(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	sha, ok, err := w.revParse(ctx, rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", rev, err)
	}
	if !ok && w.url != "" && strings.HasPrefix(rev, "origin/") {
		sha, ok, err = w.revParse(ctx, "refs/heads/"+strings.TrimPrefix(rev, "origin/")+"^{commit}")
		if err != nil {
			return "", fmt.Errorf("resolve %q: %w", rev, err)
		}
	}
	if !ok {
		hint := "fetch it into " + w.source + " first, or check the spelling"
		if w.url != "" {
			hint = "the mirror was fetched from " + w.source + " when opened; push it there, or check the spelling (a pull request is refs/pull/N/head on GitHub)"
		}
		return "", fmt.Errorf("resolve %q: %w: no commit of that name in %s; %s", rev, ErrUnknownRevision, w.source, hint)
	}
	return sha, nil
}

// checkRev rejects what cannot be a revision name.
func checkRev(rev string) error {
	switch {
	case rev == "":
		return fmt.Errorf("resolve: %w: empty revision; pass a branch, tag or commit SHA", ErrUnknownRevision)
	case strings.HasPrefix(rev, "-"):
		return fmt.Errorf("resolve %q: %w: a revision cannot begin with '-' (git would read it as an option)", rev, ErrUnknownRevision)
	case strings.ContainsAny(rev, "\x00\n"):
		return fmt.Errorf("resolve %q: %w: a revision cannot contain NUL or newline", rev, ErrUnknownRevision)
	}
	return nil
}

// revParse returns the object name of spec; ok is false when spec names
// nothing.
func (w *Workspace) revParse(ctx context.Context, spec string) (name string, ok bool, err error) {
	out, err := w.git(ctx, w.dir, "rev-parse", "--verify", "--quiet", "--end-of-options", spec)
	if err != nil {
		if exitCode(err) == 1 && ctx.Err() == nil {
			return "", false, nil
		}
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// ReadFile returns the contents of the file at path (slash-separated,
// relative to the repository's top) in the commit rev names, as stored by
// git (no filters, no line-ending conversion). A path that does not exist
// there gives an error wrapping ErrFileNotFound; an unknown rev, one
// wrapping ErrUnknownRevision.
func (w *Workspace) ReadFile(ctx context.Context, rev, file string) ([]byte, error) {
	clean := path.Clean(file)
	if file == "" || path.IsAbs(file) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, fmt.Errorf("read %q: want a path relative to the repository's top directory", file)
	}
	sha, err := w.resolveSHA(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", clean, err)
	}
	oid, ok, err := w.revParse(ctx, sha+":"+clean)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", clean, short(sha), err)
	}
	if !ok {
		return nil, fmt.Errorf("read %s at %s: %w", clean, short(sha), ErrFileNotFound)
	}
	typ, err := w.git(ctx, w.dir, "cat-file", "-t", oid)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", clean, short(sha), err)
	}
	if t := strings.TrimSpace(string(typ)); t != "blob" {
		return nil, fmt.Errorf("read %s at %s: not a file (a %s)", clean, short(sha), t)
	}
	data, err := w.git(ctx, w.dir, "cat-file", "blob", oid)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", clean, short(sha), err)
	}
	return data, nil
}

// FirstParentRange returns the commits in good..bad along the first-parent
// chain (what `git rev-list --first-parent good..bad` lists), oldest
// first: bad is last, good is not included. good must be an ancestor of
// bad (else the error wraps ErrNotAncestor). It is the list a bisection
// searches.
func (w *Workspace) FirstParentRange(ctx context.Context, good, bad string) ([]Commit, error) {
	return w.rangeOf(ctx, good, bad, "--first-parent")
}

// AllCommitsRange returns every commit in good..bad (reachable from bad,
// not from good: what `git rev-list --topo-order --reverse good..bad`
// lists), in a linear order in which every commit comes after its
// parents, so bad is last and good is not included. Commits that reached
// the branch through merges are there too, each after the commits it
// was made on. good must be an ancestor of bad (else the error wraps
// ErrNotAncestor).
func (w *Workspace) AllCommitsRange(ctx context.Context, good, bad string) ([]Commit, error) {
	return w.rangeOf(ctx, good, bad, "--topo-order")
}

// rangeOf lists good..bad, oldest first, with a git log ordering option.
func (w *Workspace) rangeOf(ctx context.Context, good, bad, order string) ([]Commit, error) {
	g, err := w.resolveSHA(ctx, good)
	if err != nil {
		return nil, fmt.Errorf("range %s..%s: %w", good, bad, err)
	}
	b, err := w.resolveSHA(ctx, bad)
	if err != nil {
		return nil, fmt.Errorf("range %s..%s: %w", good, bad, err)
	}
	if _, err := w.git(ctx, w.dir, "merge-base", "--is-ancestor", g, b); err != nil {
		if exitCode(err) == 1 && ctx.Err() == nil {
			return nil, fmt.Errorf("range %s..%s: %w: %s (%s) is not an ancestor of %s (%s); pass an older good revision",
				good, bad, ErrNotAncestor, good, short(g), bad, short(b))
		}
		return nil, fmt.Errorf("range %s..%s: %w", good, bad, err)
	}
	cs, err := w.log(ctx, order, "--reverse", g+".."+b)
	if err != nil {
		return nil, fmt.Errorf("range %s..%s: %w", good, bad, err)
	}
	return cs, nil
}

// log runs git log with the given options and revisions (already
// resolved, never user input) and parses the commits.
func (w *Workspace) log(ctx context.Context, args ...string) ([]Commit, error) {
	full := append([]string{"log", "-z", "--no-color", "--no-show-signature", commitFormat}, args...)
	full = append(full, "--")
	out, err := w.git(ctx, w.dir, full...)
	if err != nil {
		return nil, err
	}
	return parseCommits(out)
}

// parseCommits parses git log -z output in commitFormat.
func parseCommits(out []byte) ([]Commit, error) {
	var cs []Commit
	for _, rec := range bytes.Split(out, []byte{0}) {
		rec = bytes.TrimLeft(rec, "\n")
		if len(rec) == 0 {
			continue
		}
		f := strings.SplitN(string(rec), "\n", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("parse git log record %q", rec)
		}
		sec, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse git log record %q: author time: %w", rec, err)
		}
		parents := strings.Fields(f[1])
		if len(parents) == 0 {
			parents = nil
		}
		cs = append(cs, Commit{
			SHA:        f[0],
			Parents:    parents,
			AuthorTime: time.Unix(sec, 0).UTC(),
			Subject:    f[3],
		})
	}
	return cs, nil
}
