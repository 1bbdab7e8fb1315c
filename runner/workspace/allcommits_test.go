package workspace

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestAllCommitsRangeListsMergedCommitsAfterTheirParents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistory(t)
	w, _ := open(t, h.repo.Dir)
	got, err := w.AllCommitsRange(ctx, h.c1, "main")
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for _, c := range got {
		shas = append(shas, c.SHA)
	}
	// f1, on the merged branch, is there, after its parent c2 and before
	// the merge; main's head is last.
	if want := []string{h.c2, h.f1, h.m, h.c4}; !reflect.DeepEqual(shas, want) {
		t.Errorf("AllCommitsRange(c1, main) = %v, want %v", shas, want)
	}
	if got, err := w.AllCommitsRange(ctx, "main", "main"); err != nil || len(got) != 0 {
		t.Errorf("AllCommitsRange(main, main) = %v, %v; want empty", got, err)
	}
	for _, f := range []func(context.Context, string, string) ([]Commit, error){w.AllCommitsRange, w.FirstParentRange} {
		if _, err := f(ctx, "feature", "v1"); !errors.Is(err, ErrNotAncestor) {
			t.Errorf("range feature..v1 error = %v, want ErrNotAncestor", err)
		}
		if _, err := f(ctx, "main", "nope"); !errors.Is(err, ErrUnknownRevision) {
			t.Errorf("range main..nope error = %v, want ErrUnknownRevision", err)
		}
	}
}
