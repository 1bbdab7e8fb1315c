package workspace

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

func TestTreeListsEveryFileAndWriteFilesWritesThemAsCommitted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := workspacetest.New(t)
	sha := repo.Commit(t, "files", map[string]string{
		"a.txt":        "a\n",
		"bin/build.sh": "#!/bin/sh\necho hi\n",
		"deep/x/y.txt": "y\n",
		"empty.txt":    "\n",
	})
	if err := os.Symlink("../a.txt", filepath.Join(repo.Dir, "deep", "link")); err != nil {
		t.Fatal(err)
	}
	sha2 := repo.Commit(t, "link", nil)
	w, _ := open(t, repo.Dir)

	tree, err := w.Tree(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tree {
		got = append(got, e.Mode+" "+e.Path)
		if len(e.OID) != 40 {
			t.Errorf("%s: OID %q", e.Path, e.OID)
		}
	}
	want := []string{"100644 a.txt", "100755 bin/build.sh", "100644 deep/x/y.txt", "100644 empty.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tree(%s) = %q, want %q", sha[:7], got, want)
	}

	tree2, err := w.Tree(ctx, sha2)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := w.WriteFiles(ctx, tree2, dir); err != nil {
		t.Fatal(err)
	}
	wantFile(t, dir, "a.txt", "a\n")
	wantFile(t, dir, "deep/x/y.txt", "y\n")
	wantFile(t, dir, "empty.txt", "\n")
	if fi, err := os.Stat(filepath.Join(dir, "bin", "build.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("bin/build.sh: %v, %v; want an executable file", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("a.txt: %v, %v; want a file no one may execute", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "deep", "link")); err != nil || target != "../a.txt" {
		t.Errorf("deep/link -> %q, %v; want a link to ../a.txt", target, err)
	}

	// Only the files asked for; a path out of the tree is refused.
	some := filepath.Join(t.TempDir(), "some")
	if err := w.WriteFiles(ctx, tree2[:1], some); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(some); len(entries) != 1 || entries[0].Name() != "a.txt" {
		t.Errorf("WriteFiles of a.txt wrote %v", entries)
	}
	bad := tree2[0]
	bad.Path = "../escape"
	if err := w.WriteFiles(ctx, []TreeEntry{bad}, some); err == nil || !strings.Contains(err.Error(), "not a path inside") {
		t.Errorf("WriteFiles(../escape) = %v, want a refusal", err)
	}
	if _, err := w.Tree(ctx, "HEAD"); err == nil {
		t.Error("Tree(HEAD) took a revision name; want a full SHA")
	}
}
