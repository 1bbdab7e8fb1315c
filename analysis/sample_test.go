package analysis

import "testing"

func TestSplitName(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, bench, phase string }{
		{"Prove/circuit=sha256/constraints=65536/backend=cpu/phase=synthesis", "Prove/circuit=sha256/constraints=65536/backend=cpu", "synthesis"},
		{"Prove/circuit=sha256/phase=msm_h/step=sort", "Prove/circuit=sha256", "msm_h/step=sort"},
		{"Prove/x=1/phase=total-16", "Prove/x=1", "total"},
		{"Decode/size=4-8", "Decode/size=4", ""},
		{"Decode/size=4-x", "Decode/size=4-x", ""},
		{"Plain", "Plain", ""},
	}
	for _, c := range cases {
		b, p := SplitName([]byte(c.in))
		if b != c.bench || p != c.phase {
			t.Errorf("SplitName(%q) = %q, %q; want %q, %q", c.in, b, p, c.bench, c.phase)
		}
	}
}
