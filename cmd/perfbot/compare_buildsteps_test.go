package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// TestCompareRefusesBadBuildInputsWithExitTwoBeforeBuilding: declared
// inputs that cannot be right exit 2 naming the step and the path, and
// nothing builds: not the undeclared step before them, not the base.
func TestCompareRefusesBadBuildInputsWithExitTwoBeforeBuilding(t *testing.T) {
	t.Parallel()
	// config declares inputs on a step that, like the undeclared one
	// before it, appends to counter when it runs.
	config := func(counter, inputs string) string {
		return "build:\n" +
			"  - [sh, -c, " + quote("echo plain >> "+counter) + "]\n" +
			"  - run: [sh, -c, " + quote("echo lib >> "+counter+"; touch ${PERFBOT_OUT}/lib.so") + "]\n" +
			"    inputs: " + inputs + "\n" +
			"    outputs: [lib.so]\n" +
			"benchmarks:\n  - name: sh\n    command: [sh, -c, " + quote(steady) + "]\n" +
			"count: 2\nwarmup: 0\nmax_count: 2\ntimeout: 30s\n"
	}
	const step = `build[1] (sh -c 'echo lib >> COUNTER; touch ${PERFBOT_OUT}/lib.so')`
	cases := []struct {
		name, inputs string
		head         map[string]string // head's change; nil: head is base (one commit, named once)
		want         []string
	}{
		{"path not at the revision", "[lib/, cudaa/]", nil,
			[]string{`base: ` + step + `.inputs: "cudaa/" is not in commit`}},
		{"path the head deletes", "[lib/, Makefile]", map[string]string{"Makefile": ""},
			[]string{`head: ` + step + `.inputs: "Makefile" is not in commit`}},
		{"glob that matches nothing", "[lib/, \"**/*.cu\"]", nil,
			[]string{step + `.inputs: "**/*.cu" matches no file of commit`}},
		{"absolute path", "[lib/, /usr/include]", nil,
			[]string{`line 4: build step (sh -c 'echo lib >> COUNTER; touch ${PERFBOT_OUT}/lib.so'): inputs: "/usr/include" is absolute`}},
		{"path out of the repository", "[lib/, ../secrets]", nil,
			[]string{`line 4: build step (sh -c`, `inputs: "../secrets" leaves the repository's top (..)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			counter := filepath.Join(t.TempDir(), "counter")
			r := workspacetest.New(t)
			base := r.Commit(t, "base", map[string]string{".perfbot.yml": config(counter, tc.inputs), "lib/a.c": "a\n", "Makefile": "lib:\n"})
			head := base
			if tc.head != nil {
				head = r.Commit(t, "head", tc.head)
			}
			env := newRunEnv(t)
			_, errOut, code := perfbot(t, env.args("compare", "--repo", r.Dir, "--base", base, "--head", head)...)
			if code != exitUsage {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, errOut)
			}
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "COUNTER", counter); !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if data, err := os.ReadFile(counter); !os.IsNotExist(err) {
				t.Errorf("build steps ran (%q, %v); want nothing built", data, err)
			}
			if builds, _ := filepath.Glob(filepath.Join(env.data, "builds", "*")); len(builds) != 0 {
				t.Errorf("builds left %q; want none", builds)
			}
		})
	}
}
