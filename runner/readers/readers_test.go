package readers

import (
	"strings"
	"testing"
)

func TestNewRejectsBadConfigNamingFieldValueAndChoices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Config
		want []string
	}{
		{Config{}, []string{"format", `""`, "gbench, criterion, libtest, hyperfine, lines"}},
		{Config{Format: "json"}, []string{"format", `"json"`, "gbench, criterion, libtest, hyperfine, lines"}},
		{Config{Format: "gbench", Pattern: "x"}, []string{"pattern", `"x"`, "only format lines"}},
		{Config{Format: "criterion", Unit: "ms"}, []string{"unit", `"ms"`, "only format lines"}},
		{Config{Format: "hyperfine", Path: "h.json", Stream: "stderr"}, []string{"stream", `"stderr"`, "only format lines"}},
		{Config{Format: "libtest", Path: "x.txt"}, []string{"path", `"x.txt"`, "gbench, criterion and hyperfine"}},
		{Config{Format: "lines", Pattern: "(?P<value>.*)", Unit: "s", Path: "x"}, []string{"path", `"x"`, "reads no file"}},
		{Config{Format: "gbench", Path: "../out.json"}, []string{"path", `"../out.json"`, "relative"}},
		{Config{Format: "hyperfine", Path: "/tmp/h.json"}, []string{"path", `"/tmp/h.json"`, "relative"}},
		{Config{Format: "hyperfine"}, []string{"hyperfine needs path", "--export-json"}},
		{Config{Format: "lines"}, []string{"needs pattern", "(?P<value>"}},
		{Config{Format: "lines", Pattern: "(?P<value>[0-9", Unit: "s"}, []string{"pattern", `"(?P<value>[0-9"`, "does not compile"}},
		{Config{Format: "lines", Pattern: "t=([0-9]+)", Unit: "s"}, []string{"pattern", `"t=([0-9]+)"`, "(?P<value>"}},
		{Config{Format: "lines", Pattern: "(?P<val>[0-9]+)", Unit: "s"}, []string{`group "val"`, "value, benchmark, phase, unit"}},
		{Config{Format: "lines", Pattern: "(?P<value>[0-9]+)"}, []string{"unit is empty", "(?P<unit>"}},
		{Config{Format: "lines", Pattern: "(?P<value>[0-9]+)", Unit: "s", Stream: "stdin"}, []string{"stream", `"stdin"`, "stdout, stderr"}},
		{Config{Format: "lines", Pattern: "(?P<value>[0-9]+)", Unit: " "}, []string{"unit", `" "`, "blank"}},
		{Config{Format: "lines", Pattern: "(?P<value>[0-9]+)", Unit: "s", Name: "/"}, []string{"name", `"/"`, "blank"}},
	} {
		r, err := New(tc.c)
		if r != nil {
			t.Errorf("New(%+v) returned a reader", tc.c)
		}
		wantErr(t, err, tc.want...)
		if !strings.HasPrefix(err.Error(), "readers: ") {
			t.Errorf("error %q does not name the package", err)
		}
	}
}

func TestNewAcceptsEveryFormat(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{
		{Format: "gbench"},
		{Format: "gbench", Path: "out/gbench.json"},
		{Format: "criterion"},
		{Format: "criterion", Path: "crate/target/criterion"},
		{Format: "libtest"},
		{Format: "hyperfine", Path: "hyperfine.json"},
		{Format: "lines", Pattern: `(?P<value>[0-9.]+) ms`, Unit: "ms"},
		{Format: "lines", Pattern: `(?P<benchmark>\S+) (?P<phase>\w+) (?P<value>[0-9.]+)(?P<unit>\w+)`, Stream: "stderr"},
	} {
		mustNew(t, c)
	}
	if len(Formats) != 5 {
		t.Fatalf("Formats = %v, want the 5 formats", Formats)
	}
}
