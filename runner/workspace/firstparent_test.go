package workspace

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestFirstParentHistoryIsOldestFirstWithoutMergedCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistory(t)
	w, _ := open(t, h.repo.Dir)
	got, err := w.FirstParentHistory(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for _, c := range got {
		shas = append(shas, c.SHA)
	}
	// f1 came in through the merge m: not on main's first-parent chain.
	if want := []string{h.c1, h.c2, h.m, h.c4}; !reflect.DeepEqual(shas, want) {
		t.Errorf("FirstParentHistory(main) = %v, want %v", shas, want)
	}
	if got[2].Subject != h.subjectM || !got[2].AuthorTime.Equal(h.atM) {
		t.Errorf("merge commit = %+v, want subject %q at %v", got[2], h.subjectM, h.atM)
	}
	if got, err := w.FirstParentHistory(ctx, "feature"); err != nil || len(got) != 3 || got[2].SHA != h.f1 {
		t.Errorf("FirstParentHistory(feature) = %v, %v; want c1, c2, f1", got, err)
	}
	if _, err := w.FirstParentHistory(ctx, "nope"); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("FirstParentHistory(nope) error = %v, want ErrUnknownRevision", err)
	}
}
