package workspace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// history is a repository with a merge, a tag and a side branch:
//
//	c1 ── c2 ──── m ── c4   main
//	        \    /
//	         f1        feature
type history struct {
	repo                *workspacetest.Repo
	c1, c2, f1, m, c4   string
	atC1, atC2, atF1    time.Time
	atM, atC4           time.Time
	subjectC2, subjectM string
}

func newHistory(t *testing.T) *history {
	t.Helper()
	h := &history{repo: workspacetest.New(t)}
	r := h.repo
	h.atC1 = r.Next
	h.c1 = r.Commit(t, "c1: first", map[string]string{
		"README":     "one\n",
		".gitignore": "/ignored/\n",
		"sub/a.txt":  "a1\n",
	})
	h.atC2 = r.Next
	h.subjectC2 = "c2: second, with a body"
	h.c2 = r.Commit(t, "c2: second,\nwith a body\n\nThe body is not the subject.", map[string]string{"README": "two\n"})
	r.Git(t, "tag", "-a", "-m", "version one", "v1")
	r.Git(t, "switch", "--quiet", "-c", "feature")
	h.atF1 = r.Next
	h.f1 = r.Commit(t, "f1: feature work", map[string]string{"feature.txt": "f\n"})
	r.Git(t, "switch", "--quiet", "main")
	h.atM = r.Next
	r.Git(t, "merge", "--quiet", "--no-ff", "-m", "m: merge feature", "feature")
	h.m = r.Git(t, "rev-parse", "HEAD")
	h.subjectM = "m: merge feature"
	r.Next = r.Next.Add(time.Hour)
	h.atC4 = r.Next
	h.c4 = r.Commit(t, "c4: fourth", map[string]string{"README": "four\n", "sub/a.txt": ""})
	return h
}

func open(t *testing.T, source string) (*Workspace, string) {
	t.Helper()
	dataDir := t.TempDir()
	w, err := Open(context.Background(), source, dataDir)
	if err != nil {
		t.Fatalf("Open(%s): %v", source, err)
	}
	return w, dataDir
}

func TestResolveGivesFullCommitForEveryKindOfRevision(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	w, _ := open(t, h.repo.Dir)
	ctx := context.Background()

	c1 := Commit{SHA: h.c1, AuthorTime: h.atC1, Subject: "c1: first"}
	c2 := Commit{SHA: h.c2, Parents: []string{h.c1}, AuthorTime: h.atC2, Subject: h.subjectC2}
	f1 := Commit{SHA: h.f1, Parents: []string{h.c2}, AuthorTime: h.atF1, Subject: "f1: feature work"}
	m := Commit{SHA: h.m, Parents: []string{h.c2, h.f1}, AuthorTime: h.atM, Subject: h.subjectM}
	c4 := Commit{SHA: h.c4, Parents: []string{h.m}, AuthorTime: h.atC4, Subject: "c4: fourth"}
	cases := []struct {
		rev  string
		want Commit
	}{
		{"main", c4},
		{"HEAD", c4},
		{"refs/heads/main", c4},
		{"feature", f1},
		{"v1", c2}, // an annotated tag peels to its commit
		{h.c1, c1},
		{h.m[:7], m},
		{strings.ToUpper(h.c2[:10]), c2},
		{"HEAD~1", m},
		{"HEAD~2", c2},
		{"main~1^2", f1},
		{"v1^", c1},
	}
	for _, c := range cases {
		got, err := w.Resolve(ctx, c.rev)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.rev, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Resolve(%q) = %+v\nwant %+v", c.rev, got, c.want)
		}
	}
	// DeepEqual compares locations too: author times are in UTC.
	if h.atC1 != workspacetest.Epoch || h.atC1.Location() != time.UTC {
		t.Errorf("first commit's date %v, want %v", h.atC1, workspacetest.Epoch)
	}
}

func TestResolveUnknownRevisionNamesItAndHints(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	w, _ := open(t, h.repo.Dir)
	for _, rev := range []string{"no-such-branch", "0123456789abcdef0123456789abcdef01234567", "main~99", ""} {
		_, err := w.Resolve(context.Background(), rev)
		if !errors.Is(err, ErrUnknownRevision) {
			t.Errorf("Resolve(%q) error = %v, want ErrUnknownRevision", rev, err)
			continue
		}
		msg := err.Error()
		if rev != "" && (!strings.Contains(msg, `"`+rev+`"`) || !strings.Contains(msg, "check the spelling")) {
			t.Errorf("Resolve(%q) error %q: want the rev quoted and a hint", rev, msg)
		}
	}
}

func TestResolveRejectsRevisionsThatLookLikeOptions(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	w, _ := open(t, h.repo.Dir)
	out := filepath.Join(t.TempDir(), "written")
	for _, rev := range []string{"-x", "--output=" + out, "--all"} {
		_, err := w.Resolve(context.Background(), rev)
		if !errors.Is(err, ErrUnknownRevision) || !strings.Contains(err.Error(), "cannot begin with '-'") {
			t.Errorf("Resolve(%q) error = %v, want a rejection", rev, err)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("an option-like revision made git write %s", out)
	}
}

func TestOpenSubdirectoryUsesRepositoryTop(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	w, _ := open(t, filepath.Join(h.repo.Dir, "sub"))
	if w.GitDir() != h.repo.Dir || w.Mirrored() {
		t.Errorf("GitDir() = %s, Mirrored() = %v; want %s in place", w.GitDir(), w.Mirrored(), h.repo.Dir)
	}
	if !strings.HasPrefix(w.Key(), "repo-") || len(w.Key()) != len("repo-")+12 {
		t.Errorf("Key() = %q, want repo-<12 hex digits>", w.Key())
	}
}

func TestOpenNotRepository(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{empty, file, filepath.Join(empty, "missing")} {
		_, err := Open(context.Background(), src, t.TempDir())
		if !errors.Is(err, ErrNotRepository) {
			t.Errorf("Open(%s) error = %v, want ErrNotRepository", src, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, src) || !strings.Contains(msg, "pass the directory of a git clone") {
			t.Errorf("Open(%s) error %q: want the path and what to pass", src, msg)
		}
	}
}

func TestOpenMirrorsCloneURLAndFetchPicksUpNewCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	work := workspacetest.New(t)
	origin := workspacetest.NewBare(t)
	c1 := work.Commit(t, "c1", map[string]string{"f": "1\n"})
	work.Git(t, "push", "--quiet", origin.Dir, "main", "main:doomed")

	dataDir := t.TempDir()
	w, err := Open(ctx, origin.URL(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Mirrored() || filepath.Dir(w.GitDir()) != filepath.Join(dataDir, "mirrors") || !strings.HasPrefix(w.Key(), "repo-") {
		t.Fatalf("Mirrored() = %v, GitDir() = %s, Key() = %s; want a mirror repo-… under %s/mirrors",
			w.Mirrored(), w.GitDir(), w.Key(), dataDir)
	}
	if bare := strings.TrimSpace(gitOut(t, w.GitDir(), "rev-parse", "--is-bare-repository")); bare != "true" {
		t.Errorf("mirror is bare: %s", bare)
	}
	for _, rev := range []string{"main", "origin/main", "doomed"} {
		if got, err := w.Resolve(ctx, rev); err != nil || got.SHA != c1 {
			t.Errorf("Resolve(%s) = %s, %v; want %s", rev, got.SHA, err, c1)
		}
	}

	c2 := work.Commit(t, "c2", map[string]string{"f": "2\n"})
	work.Git(t, "push", "--quiet", origin.Dir, "main", ":doomed")
	if got, _ := w.Resolve(ctx, "main"); got.SHA != c1 {
		t.Errorf("before fetch main = %s, want %s", got.SHA, c1)
	}
	// A second Open of the same URL fetches into the same mirror.
	w2, err := Open(ctx, origin.URL(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if w2.GitDir() != w.GitDir() {
		t.Errorf("second Open mirror %s, first %s", w2.GitDir(), w.GitDir())
	}
	if got, err := w2.Resolve(ctx, "main"); err != nil || got.SHA != c2 || got.Parents[0] != c1 {
		t.Errorf("after fetch Resolve(main) = %+v, %v; want %s with parent %s", got, err, c2, c1)
	}
	if _, err := w2.Resolve(ctx, "doomed"); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("deleted branch after fetch --prune: %v, want ErrUnknownRevision", err)
	}

	c3 := work.Commit(t, "c3", nil)
	work.Git(t, "push", "--quiet", origin.Dir, "main")
	if err := w.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := w.Resolve(ctx, "main"); err != nil || got.SHA != c3 {
		t.Errorf("after Fetch Resolve(main) = %s, %v; want %s", got.SHA, err, c3)
	}
	dir, err := w.Checkout(ctx, c2)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "2\n" {
		t.Errorf("mirror checkout f = %q, %v", b, err)
	}
	// A worktree of the (bare) mirror is reused too: same file, not a new one.
	before, err := os.Stat(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := w.Checkout(ctx, c2); err != nil || again != dir {
		t.Fatalf("second Checkout = %s, %v", again, err)
	}
	if after, err := os.Stat(filepath.Join(dir, "f")); err != nil || !os.SameFile(before, after) {
		t.Errorf("the mirror's worktree was made again (%v)", err)
	}
}

func TestOpenBareRepositoryPathIsMirrored(t *testing.T) {
	t.Parallel()
	work := workspacetest.New(t)
	origin := workspacetest.NewBare(t)
	c1 := work.Commit(t, "c1", map[string]string{"f": "1\n"})
	work.Git(t, "push", "--quiet", origin.Dir, "main")
	w, dataDir := open(t, origin.Dir)
	if !w.Mirrored() || !strings.HasPrefix(w.GitDir(), dataDir) {
		t.Errorf("Mirrored() = %v, GitDir() = %s; want a mirror under %s", w.Mirrored(), w.GitDir(), dataDir)
	}
	if got, err := w.Resolve(context.Background(), "main"); err != nil || got.SHA != c1 {
		t.Errorf("Resolve(main) = %s, %v; want %s", got.SHA, err, c1)
	}
}

// A worktree that perfbot before the borrowed repositories registered in
// the source repository itself is taken back from it on the next Checkout
// of that commit, which makes it again under perfbot's own repository; a
// commit made in the source after Open is checked out without a fetch.
func TestCheckoutTakesBackWorktreesRegisteredInTheSourceRepository(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistory(t)
	w, dataDir := open(t, h.repo.Dir)
	old := filepath.Join(dataDir, "worktrees", w.Key(), h.c2)
	h.repo.Git(t, "worktree", "add", "--detach", "--quiet", old, h.c2)
	// The user's own worktree is left alone.
	mine := filepath.Join(t.TempDir(), "mine")
	h.repo.Git(t, "worktree", "add", "--detach", "--quiet", mine, h.c1)

	dir, err := w.Checkout(ctx, h.c2)
	if err != nil {
		t.Fatal(err)
	}
	if dir != old {
		t.Fatalf("Checkout = %s, want %s", dir, old)
	}
	wantFile(t, dir, "README", "two\n")
	list := gitOut(t, h.repo.Dir, "worktree", "list", "--porcelain")
	if strings.Contains(list, old) || !strings.Contains(list, mine) || strings.Count(list, "worktree ") != 2 {
		t.Errorf("source repository's worktrees, want its own two:\n%s", list)
	}
	if common := gitOut(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir"); strings.TrimSpace(common) != filepath.Join(dataDir, "borrowed", w.Key()) {
		t.Errorf("the worktree belongs to %s", common)
	}

	c5 := h.repo.Commit(t, "c5: after Open", map[string]string{"README": "five\n"})
	dir5, err := w.Checkout(ctx, c5)
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, dir5, "README", "five\n")
}

func TestCheckoutMakesReusesAndRepairsWorktrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistory(t)
	// The source repository has uncommitted work that must survive.
	if err := os.WriteFile(filepath.Join(h.repo.Dir, "README"), []byte("local edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(h.repo.Dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	w, dataDir := open(t, h.repo.Dir)

	dir2, err := w.Checkout(ctx, h.c2)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dataDir, "worktrees", w.Key(), h.c2); dir2 != want {
		t.Errorf("Checkout dir = %s, want %s", dir2, want)
	}
	wantFile(t, dir2, "README", "two\n")
	wantFile(t, dir2, "sub/a.txt", "a1\n")
	if _, err := os.Stat(filepath.Join(dir2, "feature.txt")); !os.IsNotExist(err) {
		t.Errorf("feature.txt at c2: %v, want absent", err)
	}
	if head := gitOut(t, dir2, "status", "--porcelain", "--branch"); !strings.HasPrefix(head, "## HEAD (no branch)") {
		t.Errorf("worktree is not detached: %q", head)
	}

	// Two revisions side by side.
	dir4, err := w.Checkout(ctx, h.c4)
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, dir4, "README", "four\n")
	wantFile(t, dir4, "feature.txt", "f\n")
	wantFile(t, dir2, "README", "two\n")

	// Reuse: an ignored file survives a second Checkout, so the worktree
	// was not made again.
	keep := filepath.Join(dir2, "ignored", "keep")
	writeFile(t, keep, "kept")
	if again, err := w.Checkout(ctx, h.c2); err != nil || again != dir2 {
		t.Fatalf("second Checkout = %s, %v; want %s", again, err, dir2)
	}
	wantFile(t, dir2, "ignored/keep", "kept")

	// Repair: a changed tracked file or an untracked file is undone.
	writeFile(t, filepath.Join(dir2, "README"), "scribbled\n")
	if _, err := w.Checkout(ctx, h.c2); err != nil {
		t.Fatal(err)
	}
	wantFile(t, dir2, "README", "two\n")
	writeFile(t, filepath.Join(dir2, "stray.txt"), "stray\n")
	if _, err := w.Checkout(ctx, h.c2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir2, "stray.txt")); !os.IsNotExist(err) {
		t.Errorf("stray file survived repair: %v", err)
	}
	// Repair: a worktree someone moved to another commit.
	gitOut(t, dir2, "checkout", "--quiet", "--detach", h.c1)
	if _, err := w.Checkout(ctx, h.c2); err != nil {
		t.Fatal(err)
	}
	wantFile(t, dir2, "README", "two\n")
	// Repair: a worktree directory deleted behind git's back (its entry is
	// stale and gets pruned).
	if err := os.RemoveAll(dir2); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Checkout(ctx, h.c2); err != nil {
		t.Fatal(err)
	}
	wantFile(t, dir2, "README", "two\n")
	// perfbot's worktrees are registered with its own repository under
	// the data directory, never in the source repository.
	if list := gitOut(t, h.repo.Dir, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("the source repository lists worktrees besides its own:\n%s", list)
	}
	borrowed := filepath.Join(dataDir, "borrowed", w.Key())
	if list := gitOut(t, borrowed, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 3 ||
		!strings.Contains(list, dir2) || !strings.Contains(list, dir4) {
		t.Errorf("want the bare repository and perfbot's two worktrees, got:\n%s", list)
	}
	if refs := gitOut(t, borrowed, "for-each-ref"); refs != "" {
		t.Errorf("the checkout repository has refs of its own:\n%s", refs)
	}

	// The source repository: same index, same branch, same local edit.
	after, err := os.ReadFile(filepath.Join(h.repo.Dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(index, after) {
		t.Error("the source repository's index changed")
	}
	if b := gitOut(t, h.repo.Dir, "symbolic-ref", "HEAD"); strings.TrimSpace(b) != "refs/heads/main" {
		t.Errorf("source HEAD = %s, want refs/heads/main", b)
	}
	if b := gitOut(t, h.repo.Dir, "rev-parse", "HEAD"); strings.TrimSpace(b) != h.c4 {
		t.Errorf("source HEAD at %s, want %s", b, h.c4)
	}
	wantFile(t, h.repo.Dir, "README", "local edit\n")
	if st := gitOut(t, h.repo.Dir, "status", "--porcelain"); st != " M README\n" {
		t.Errorf("source status = %q, want only the local edit", st)
	}
}

func TestCheckoutConcurrentCallsShareOneWorktree(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	dataDir := t.TempDir()
	const n = 4
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Separate Workspaces, as two processes would have.
			w, err := Open(context.Background(), h.repo.Dir, dataDir)
			if err != nil {
				errs[i] = err
				return
			}
			dirs[i], errs[i] = w.Checkout(context.Background(), h.c2)
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Errorf("Checkout %d = %s, %v; want %s", i, dirs[i], errs[i], dirs[0])
		}
	}
	wantFile(t, dirs[0], "README", "two\n")
}

// Base and head build at once: their checkouts run side by side.
func TestCheckoutOfDifferentCommitsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	dataDir := t.TempDir()
	shas := []string{h.c1, h.c2, h.f1, h.m, h.c4}
	dirs := make([]string, 2*len(shas))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Go(func() {
			// Separate Workspaces, as two processes would have.
			w, err := Open(context.Background(), h.repo.Dir, dataDir)
			if err != nil {
				errs[i] = err
				return
			}
			dirs[i], errs[i] = w.Checkout(context.Background(), shas[i%len(shas)])
		})
	}
	wg.Wait()
	for i, dir := range dirs {
		sha := shas[i%len(shas)]
		if errs[i] != nil {
			t.Errorf("Checkout %d (%s): %v", i, sha[:7], errs[i])
			continue
		}
		if head := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD")); head != sha {
			t.Errorf("Checkout %d: %s has HEAD %s, want %s", i, dir, head, sha)
		}
		if status := gitOut(t, dir, "status", "--porcelain"); status != "" {
			t.Errorf("Checkout %d: %s is not clean:\n%s", i, dir, status)
		}
	}
}

func TestCheckoutWantsAFullSHA(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	w, _ := open(t, h.repo.Dir)
	for _, sha := range []string{"main", h.c2[:12], "--force", strings.ToUpper(h.c2)} {
		if _, err := w.Checkout(context.Background(), sha); err == nil || !strings.Contains(err.Error(), "want a full") {
			t.Errorf("Checkout(%q) error = %v, want a full-SHA error", sha, err)
		}
	}
	if _, err := w.Checkout(context.Background(), strings.Repeat("ab", 20)); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("Checkout(unknown SHA) error = %v, want ErrUnknownRevision", err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistory(t)
	w, _ := open(t, h.repo.Dir)
	for _, c := range []struct{ rev, path, want string }{
		{h.c2, "README", "two\n"},
		{"main", "README", "four\n"},
		{h.c1, "sub/a.txt", "a1\n"},
		{"v1", "./sub/a.txt", "a1\n"},
	} {
		got, err := w.ReadFile(ctx, c.rev, c.path)
		if err != nil || string(got) != c.want {
			t.Errorf("ReadFile(%s, %s) = %q, %v; want %q", c.rev, c.path, got, err, c.want)
		}
	}
	for _, c := range []struct{ rev, path string }{
		{h.c4, "sub/a.txt"}, // deleted in c4
		{h.c1, ".perfbot.yml"},
		{h.c1, "sub/none"},
	} {
		if _, err := w.ReadFile(ctx, c.rev, c.path); !errors.Is(err, ErrFileNotFound) {
			t.Errorf("ReadFile(%s, %s) error = %v, want ErrFileNotFound", c.rev, c.path, err)
		}
	}
	if _, err := w.ReadFile(ctx, h.c1, "sub"); err == nil || errors.Is(err, ErrFileNotFound) || !strings.Contains(err.Error(), "not a file") {
		t.Errorf("ReadFile(directory) error = %v, want not a file", err)
	}
	if _, err := w.ReadFile(ctx, "nope", "README"); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("ReadFile(unknown rev) error = %v, want ErrUnknownRevision", err)
	}
	for _, p := range []string{"", "/etc/passwd", "../x", "sub/../../x"} {
		if _, err := w.ReadFile(ctx, h.c1, p); err == nil || errors.Is(err, ErrFileNotFound) {
			t.Errorf("ReadFile(%q) error = %v, want a bad-path error", p, err)
		}
	}
}

func TestFirstParentRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistory(t)
	w, _ := open(t, h.repo.Dir)
	got, err := w.FirstParentRange(ctx, h.c1, "main")
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for _, c := range got {
		shas = append(shas, c.SHA)
	}
	// f1 is on the merged branch, not on main's first-parent chain.
	if want := []string{h.c2, h.m, h.c4}; !reflect.DeepEqual(shas, want) {
		t.Errorf("FirstParentRange(c1, main) = %v, want %v", shas, want)
	}
	if got[1].Subject != h.subjectM || !reflect.DeepEqual(got[1].Parents, []string{h.c2, h.f1}) {
		t.Errorf("merge commit = %+v", got[1])
	}
	if got, err := w.FirstParentRange(ctx, "main", "main"); err != nil || len(got) != 0 {
		t.Errorf("FirstParentRange(main, main) = %v, %v; want empty", got, err)
	}
	if _, err := w.FirstParentRange(ctx, "feature", "v1"); err == nil || !strings.Contains(err.Error(), "is not an ancestor") {
		t.Errorf("FirstParentRange(feature, v1) error = %v, want not an ancestor", err)
	}
	if _, err := w.FirstParentRange(ctx, "nope", "main"); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("FirstParentRange(nope, main) error = %v, want ErrUnknownRevision", err)
	}
}

func TestLockExcludesAndHonorsContext(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x", "lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Lock while held: %v, want deadline exceeded", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := Lock(context.Background(), path)
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond)
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("Lock after release: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Lock did not get the lock after its release")
	}
}

func TestKeyNameAndURLs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		src  string
		url  bool
		base string
	}{
		{"https://github.com/perfbot/perfbot.git", true, "perfbot"},
		{"git@github.com:perfbot/perfbot.git", true, "perfbot"},
		{"ssh://git@host/x/y", true, "y"},
		{"file:///srv/git/repo.git/", true, "repo"},
		{"/srv/git/repo", false, "repo"},
		{"./a:b", false, "b"},
		{"relative/dir", false, "dir"},
	} {
		if got := isURL(c.src); got != c.url {
			t.Errorf("isURL(%q) = %v, want %v", c.src, got, c.url)
		}
		if got := repoBase(c.src); got != c.base {
			t.Errorf("repoBase(%q) = %q, want %q", c.src, got, c.base)
		}
	}
	if a, b := keyName("x", "https://github.com/o/r"), keyName("x", stripUserinfo("https://u:tok@github.com/o/r")); a != b {
		t.Errorf("a credential changed the mirror key: %s, %s", a, b)
	}
	if got := redact("https://u:secret@github.com/o/r"); strings.Contains(got, "secret") {
		t.Errorf("redact left the password: %s", got)
	}
	if got := keyName("../we ird", "id"); !strings.HasPrefix(got, "_we_ird-") {
		t.Errorf("keyName = %s", got)
	}
}

func wantFile(t *testing.T, dir, name, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil || string(b) != want {
		t.Errorf("%s in %s = %q, %v; want %q", name, dir, b, err, want)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitOut runs git in dir with a neutral environment and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := runGit(context.Background(), t.TempDir(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestCheckoutRunsNoHooksOfTheSourceRepository(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	ran := filepath.Join(t.TempDir(), "hook-ran")
	writeFile(t, filepath.Join(h.repo.Dir, ".git", "hooks", "post-checkout"), "#!/bin/sh\ntouch "+ran+"\n")
	if err := os.Chmod(filepath.Join(h.repo.Dir, ".git", "hooks", "post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, _ := open(t, h.repo.Dir)
	if _, err := w.Checkout(context.Background(), h.c2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the source repository's post-checkout hook ran")
	}
}
