package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// orderOf returns the side names of n rounds of one benchmark.
func orderOf(s *scheduler, n int) []string {
	sides := []*side{{name: "base"}, {name: "head"}}
	var out []string
	for range n {
		for _, sd := range s.next("b", sides) {
			out = append(out, sd.name)
		}
	}
	return out
}

func TestSchedulerOrders(t *testing.T) {
	t.Parallel()
	if got := orderOf(newScheduler(OrderAlternate, 1), 3); !slices.Equal(got, []string{"base", "head", "base", "head", "base", "head"}) {
		t.Errorf("alternate: %v", got)
	}
	if got := orderOf(newScheduler(OrderABBA, 1), 4); !slices.Equal(got, []string{"base", "head", "head", "base", "base", "head", "head", "base"}) {
		t.Errorf("abba: %v", got)
	}
	// abba counts each benchmark's rounds on its own: two benchmarks a
	// round still balance each.
	s := newScheduler(OrderABBA, 1)
	sides := []*side{{name: "base"}, {name: "head"}}
	var first []string
	for range 2 {
		for _, b := range []string{"x", "y"} {
			first = append(first, b+":"+s.next(b, sides)[0].name)
		}
	}
	if !slices.Equal(first, []string{"x:base", "y:base", "x:head", "y:head"}) {
		t.Errorf("abba over two benchmarks: first sides %v", first)
	}
}

// A random order is a fair coin per round, replayed exactly by its seed
// and different under another seed.
func TestSchedulerRandomIsFairAndReplayedBySeed(t *testing.T) {
	t.Parallel()
	a := orderOf(newScheduler(OrderRandom, 42), 2000)
	if b := orderOf(newScheduler(OrderRandom, 42), 2000); !slices.Equal(a, b) {
		t.Fatal("the same seed gave two orders")
	}
	if c := orderOf(newScheduler(OrderRandom, 43), 2000); slices.Equal(a, c) {
		t.Fatal("seeds 42 and 43 gave the same order")
	}
	baseFirst := 0
	for i := 0; i < len(a); i += 2 {
		if a[i] == "base" {
			baseFirst++
		}
	}
	// 2,000 fair coins: within ±4 standard deviations (±89) of 1,000.
	if baseFirst < 911 || baseFirst > 1089 {
		t.Errorf("base ran first in %d of 2000 rounds", baseFirst)
	}
}

func TestParseSeed(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"1", "12345", "9223372036854775807"} {
		if _, err := ParseSeed(ok); err != nil {
			t.Errorf("ParseSeed(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "0", "abc", "-5", "1.5", "9223372036854775808"} {
		_, err := ParseSeed(bad)
		if err == nil || !strings.Contains(err.Error(), "want a whole number from 1 to 9223372036854775807") {
			t.Errorf("ParseSeed(%q): %v", bad, err)
		}
	}
	for range 100 {
		if s := NewSeed(); s == 0 || s > 1<<63-1 {
			t.Fatalf("NewSeed() = %d", s)
		}
	}
}

// positionBench is slower by 30% in phase a when it is the first run of
// its round: it counts its runs in $COUNTER, and each round has two
// (base and head, warm-ups included). That is the position effect of a
// first process warming a cache for the second.
const positionBench = `n=$(cat "$COUNTER" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$COUNTER"
a=1000; [ $((n % 2)) = 1 ] && a=1300
echo "BenchmarkX/phase=a 1 $((a + $$ % 5)) ns/op"
echo "BenchmarkX/phase=total 1 $((a + 500 + $$ % 5)) ns/op"`

func positionConfig(order, counter string, count int) string {
	script, _ := json.Marshal(positionBench)
	return fmt.Sprintf("benchmarks:\n  - name: sh\n    command: [sh, -c, %s, sh]\n    env: {COUNTER: %q}\n"+
		"count: %d\nwarmup: 1\nmax_count: %d\ntimeout: 30s\norder: %s\n", script, counter, count, count, order)
}

// An A/A comparison under a position effect: always running base first
// (alternate, the old order) lands the effect on base and reports head
// "improved", as the busy-machine A/A run of issue 15 did; abba balances
// it exactly and reports no improvement. Real processes, one revision.
func TestPositionEffectFoolsAlternateOrderOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		order   string
		changed bool
	}{{OrderAlternate, true}, {OrderABBA, false}} {
		t.Run(tc.order, func(t *testing.T) {
			t.Parallel()
			repo := workspacetest.New(t)
			sha := repo.Commit(t, "position", map[string]string{".perfbot.yml": positionConfig(tc.order, filepath.Join(t.TempDir(), "n"), 8)})
			r := newPRRunner(t)
			res, err := r.Compare(context.Background(), CompareRequest{Source: repo.Dir, Base: sha, Head: sha})
			if err != nil {
				t.Fatal(err)
			}
			var a *analysis.Row
			for i := range res.Report.Phases {
				if p := &res.Report.Phases[i]; p.Phase == "a" && p.Unit == "sec/op" {
					a = p
				}
			}
			if a == nil {
				t.Fatalf("no row for phase a: %+v", res.Report.Phases)
			}
			if got := a.Changed(); got != tc.changed {
				t.Errorf("%s order: phase a %s %+.1f%% (p (adj.) %.3g); want changed=%v. Schedule %v",
					tc.order, a.Verdict, a.Change(), a.PValue, tc.changed, res.Schedule)
			}
			if tc.order == OrderAlternate && (a.Verdict != analysis.VerdictImprovement || a.Change() > -20) {
				t.Errorf("alternate: phase a %s %+.1f%%, want the position effect as a false improvement of about -23%%", a.Verdict, a.Change())
			}
		})
	}
}

// The seed of a random order is stored with the comparison, printed in
// its report, and replays the order: the same seed gives the same
// schedule, which the comparison's inputs also store run by run.
func TestCompareStoresAndReplaysItsSeed(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	sha := repo.Commit(t, "seeded", map[string]string{".perfbot.yml": positionConfig(OrderRandom, filepath.Join(t.TempDir(), "n"), 6)})
	r := newPRRunner(t)
	ctx := context.Background()
	first, err := r.Compare(ctx, CompareRequest{Source: repo.Dir, Base: sha, Head: sha, Seed: 987654321})
	if err != nil {
		t.Fatal(err)
	}
	if first.Seed != 987654321 || first.Report.Seed != 987654321 || first.Report.Order != OrderRandom {
		t.Errorf("seed %d, report seed %d order %q", first.Seed, first.Report.Seed, first.Report.Order)
	}
	if len(first.Schedule) != 12 || !strings.Contains(first.Markdown, "seed 987654321: --seed 987654321 replays it") {
		t.Errorf("schedule %v; markdown:\n%s", first.Schedule, first.Markdown)
	}
	again, err := r.Compare(ctx, CompareRequest{Source: repo.Dir, Base: sha, Head: sha, Seed: 987654321})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first.Schedule, again.Schedule) {
		t.Errorf("the same seed ran %v, then %v", first.Schedule, again.Schedule)
	}
	other, err := r.Compare(ctx, CompareRequest{Source: repo.Dir, Base: sha, Head: sha})
	if err != nil {
		t.Fatal(err)
	}
	if other.Seed == first.Seed {
		t.Errorf("a comparison without a seed reused seed %d", other.Seed)
	}

	stored, err := r.Store.(*store.DB).Comparison(ctx, first.ComparisonID)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Order    string   `json:"order"`
		Seed     string   `json:"seed"`
		Looks    []int    `json:"looks"`
		Schedule []string `json:"schedule"`
		BaseRuns []int64  `json:"base_runs"`
		HeadRuns []int64  `json:"head_runs"`
	}
	if err := json.Unmarshal([]byte(stored.Inputs), &in); err != nil {
		t.Fatal(err)
	}
	if in.Order != OrderRandom || in.Seed != strconv.FormatUint(first.Seed, 10) || !slices.Equal(in.Schedule, first.Schedule) || !slices.Equal(in.Looks, []int{6}) {
		t.Errorf("stored inputs: order %q seed %q looks %v schedule %v", in.Order, in.Seed, in.Looks, in.Schedule)
	}
	// The schedule is the order the runs were stored in: run IDs grow
	// as runs end, so merging the two sides' IDs gives it back.
	var byID []string
	b, h := in.BaseRuns, in.HeadRuns
	for len(b) > 0 || len(h) > 0 {
		if len(h) == 0 || len(b) > 0 && b[0] < h[0] {
			byID, b = append(byID, "base"), b[1:]
		} else {
			byID, h = append(byID, "head"), h[1:]
		}
	}
	if !slices.Equal(byID, in.Schedule) {
		t.Errorf("runs stored in the order %v, schedule says %v", byID, in.Schedule)
	}
}
