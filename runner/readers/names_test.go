package readers

import "testing"

func TestSplitNameMakesGoStyleParts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		colons bool
		want   string
	}{
		{"BM_Sort/1024", true, "BM_Sort/arg0=1024"},
		{"BM_Two/1/-2/x", false, "BM_Two/arg0=1/arg1=-2/x"},
		{"BM_Two/n:1/k:2", true, "BM_Two/n=1/k=2"},
		{"BM_Two/n:1/k:2", false, "BM_Two/n:1/k:2"},
		{"BM_F/min_time:0.010/threads:2", true, "BM_F/min_time=0.010/threads=2"},
		{"BM_F/8/real_time", true, "BM_F/arg0=8/real_time"},
		{"my bench/the case", false, "my_bench/the_case"},
		{"  a//b/ ", false, "a/b"},
		{"Prove/phase=msm", false, "Prove/phase_=msm"},
		{"Prove/phase:1", true, "Prove/phase_=1"},
		{"1024", false, "1024"},
		{"x/n=-4", false, "x/n=_4"},
		{"x-8", false, "x_8"},
		{"tab\there", false, "tab_here"},
		{"", false, ""},
		{"/", false, ""},
	} {
		if got := splitName(tc.in, tc.colons); got != tc.want {
			t.Errorf("splitName(%q, %v) = %q, want %q", tc.in, tc.colons, got, tc.want)
		}
	}
	if got := kv("file", "a/b c.txt"); got != "file=a_b_c.txt" {
		t.Errorf("kv keeps a value's / or space: %q", got)
	}
	if got := phaseName(" msm_h/step=sort "); got != "msm_h/step=sort" {
		t.Errorf("phaseName = %q", got)
	}
}

func TestUnitOfConvertsTimesToSeconds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		unit   string
		factor float64
	}{
		{"ns", "sec/op", 1e-9},
		{"us", "sec/op", 1e-6},
		{"µs", "sec/op", 1e-6},
		{"μs", "sec/op", 1e-6},
		{"ms", "sec/op", 1e-3},
		{"s", "sec/op", 1},
		{"ns/op", "sec/op", 1e-9},
		{"ns/iter", "sec/op", 1e-9},
		{"synthesis_ms", "synthesis-sec/op", 1e-3},
		{"wall-s", "wall-sec/op", 1},
		{"B", "B/op", 1},
		{"B/s", "B/s", 1},
		{"ms/proof", "ms/proof", 1},
		{"peak rss", "peak_rss/op", 1},
		{"", "", 1},
	} {
		if u, f := unitOf(tc.in); u != tc.unit || f != tc.factor {
			t.Errorf("unitOf(%q) = %q, %g; want %q, %g", tc.in, u, f, tc.unit, tc.factor)
		}
	}
}
