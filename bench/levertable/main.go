// Command levertable reads bench/gpu-levers.sh's output directory and
// prints, per arm and phase, the median over the arm's processes and the
// 95% interval of that median as ± percent: the interval perfbot compare
// gives a side of that many runs (benchmath.AssumeNothing over one value
// per process, the median of its measured proofs).
//
//	go run ./bench/levertable OUT [PHASE…]
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
)

var file = regexp.MustCompile(`^(.+)-r(\d+)\.txt$`)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: levertable OUT [PHASE…] (OUT written by bench/gpu-levers.sh)")
		os.Exit(2)
	}
	phases := os.Args[2:]
	if len(phases) == 0 {
		phases = []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_l", "msm_h", "msm_b2", "msm_b2_wait", "total"}
	}
	entries, err := os.ReadDir(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// arm → phase → one value per process (ms)
	runs := map[string]map[string][]float64{}
	for _, e := range entries {
		m := file.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		per, err := medians(filepath.Join(os.Args[1], e.Name()))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if runs[m[1]] == nil {
			runs[m[1]] = map[string][]float64{}
		}
		for p, v := range per {
			runs[m[1]][p] = append(runs[m[1]][p], v)
		}
	}
	arms := make([]string, 0, len(runs))
	for a := range runs {
		arms = append(arms, a)
	}
	sort.Strings(arms)
	fmt.Printf("| arm | n |")
	for _, p := range phases {
		fmt.Printf(" %s |", p)
	}
	fmt.Printf("\n|---|---|%s\n", strings.Repeat("---|", len(phases)))
	for _, a := range arms {
		n := len(runs[a]["total"])
		fmt.Printf("| %s | %d |", a, n)
		for _, p := range phases {
			v := runs[a][p]
			if len(v) == 0 {
				fmt.Printf(" – |")
				continue
			}
			s := benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &benchmath.DefaultThresholds), 0.95)
			half := max(s.Hi-s.Center, s.Center-s.Lo) / s.Center * 100
			fmt.Printf(" %.4g ms ±%.1f%% |", s.Center, half)
		}
		fmt.Println()
	}
}

// medians returns each phase's median ns/op over a process's proofs, in ms.
func medians(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vals := map[string][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "BenchmarkProve/") {
			continue
		}
		_, phase, ok := strings.Cut(fields[0], "/phase=")
		if !ok {
			continue
		}
		for i := 2; i+1 < len(fields); i += 2 {
			if fields[i+1] == "ns/op" {
				v, err := strconv.ParseFloat(fields[i], 64)
				if err != nil {
					return nil, fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
				}
				vals[phase] = append(vals[phase], v/1e6)
			}
		}
	}
	out := map[string]float64{}
	for p, v := range vals {
		slices.Sort(v)
		n := len(v)
		out[p] = (v[(n-1)/2] + v[n/2]) / 2
	}
	return out, sc.Err()
}
