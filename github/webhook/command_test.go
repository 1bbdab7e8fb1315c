package webhook

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCommandAcceptsGoodForms(t *testing.T) {
	t.Parallel()
	run := func(n int) *Command { return &Command{Run: &RunCommand{Count: n}} }
	bisect := func(good, bad, phase string) *Command {
		return &Command{Bisect: &BisectCommand{Good: good, Bad: bad, Phase: phase}}
	}
	help := &Command{}
	tests := []struct {
		name, body string
		want       *Command
	}{
		{"run", "/perfbot run", run(0)},
		{"run with count", "/perfbot run count=12", run(12)},
		{"smallest count", "/perfbot run count=2", run(2)},
		{"largest count", "/perfbot run count=1000", run(1000)},
		{"leading spaces", "   /perfbot run count=5", run(5)},
		{"leading tab", "\t/perfbot run", run(0)},
		{"trailing blanks", "/perfbot run count=3  \t", run(3)},
		{"among other lines with CRLF", "LGTM, one question.\r\n\r\n/perfbot run count=5\r\n\r\nThanks!", run(5)},
		{"bisect", "/perfbot bisect v1.4.0 9f2c4e1a", bisect("v1.4.0", "9f2c4e1a", "")},
		{"bisect with phase", "/perfbot bisect HEAD~3 main phase=msm_h", bisect("HEAD~3", "main", "msm_h")},
		{"bisect with phase first", "/perfbot bisect phase=ntt v1.4.0 v1.5.0", bisect("v1.4.0", "v1.5.0", "ntt")},
		{"bisect with extra blanks", "/perfbot   bisect  a1b2c3   d4e5f6   phase=msm_b2 ", bisect("a1b2c3", "d4e5f6", "msm_b2")},
		{"bisect branch with slash and caret", "/perfbot bisect release/1.4 main^", bisect("release/1.4", "main^", "")},
		{"bare keyword is help", "/perfbot", help},
		{"help", "/perfbot help", help},
		{"first command wins", "/perfbot run count=3\n/perfbot bisect a b", run(3)},
		{"command after a fenced one", "```\n/perfbot run count=9\n```\n/perfbot run count=4", run(4)},
		{"command after a quoted one", "> /perfbot run count=9\n/perfbot run", run(0)},
		{"shorter run does not close a fence", "~~~~\n/perfbot run\n~~~\n/perfbot run count=8\n~~~~\n/perfbot run count=7", run(7)},
		{"backticks do not close a tilde fence", "~~~\n```\n/perfbot run count=8\n~~~\n/perfbot run count=6", run(6)},
		{"fence with info string", "```console\n$ /perfbot run count=8\n/perfbot run count=8\n```\n/perfbot run count=6", run(6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ParseCommand(tt.body)
			if !ok {
				t.Fatalf("ParseCommand(%q): ok = false, want a command", tt.body)
			}
			if got.Err != nil {
				t.Fatalf("ParseCommand(%q): Err = %v, want nil", tt.body, got.Err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseCommand(%q) = %+v (run %+v, bisect %+v), want %+v (run %+v, bisect %+v)",
					tt.body, got, got.Run, got.Bisect, tt.want, tt.want.Run, tt.want.Bisect)
			}
		})
	}
}

func TestParseCommandFindsNoCommand(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		"",
		"LGTM",
		"/Perfbot run",
		"/PERFBOT run",
		"/perfbotrun",
		"/perfbot:run",
		"please /perfbot run",
		"`/perfbot run`",
		"> /perfbot run",
		"  > /perfbot run count=3",
		"```\n/perfbot run\n```",
		"```go\n/perfbot run", // an unclosed fence runs to the end
		"~~~\n/perfbot run\n~~~",
		Usage, // perfbot's own reply must not trigger it
	} {
		if cmd, ok := ParseCommand(body); ok {
			t.Errorf("ParseCommand(%q) = %+v, true; want no command", body, cmd)
		}
	}
}

func TestParseCommandRejectsBadArguments(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 300)
	tests := []struct{ body, wantErr string }{
		{"/perfbot run count=1", `count must be a whole number from 2 to 1000, not "1"`},
		{"/perfbot run count=1001", `count must be a whole number from 2 to 1000, not "1001"`},
		{"/perfbot run count=ten", `count must be a whole number from 2 to 1000, not "ten"`},
		{"/perfbot run count=", `count must be a whole number from 2 to 1000, not ""`},
		{"/perfbot run count=-5", `count must be a whole number from 2 to 1000, not "-5"`},
		{"/perfbot run 12", `unexpected argument "12": run takes only count=N`},
		{"/perfbot run count=3 count=4", `count given twice: give it once`},
		{"/perfbot run phase=msm_h", `unknown option "phase": run takes count=N`},
		{"/perfbot bisect", `bisect needs two revisions: /perfbot bisect GOOD BAD`},
		{"/perfbot bisect v1.4.0", `bisect needs two revisions: /perfbot bisect GOOD BAD`},
		{"/perfbot bisect a b c", `unexpected argument "c": bisect takes two revisions, GOOD and BAD`},
		{"/perfbot bisect -x main", `GOOD revision "-x" starts with '-': give a commit SHA, tag or branch`},
		{"/perfbot bisect main --upload-pack", `BAD revision "--upload-pack" starts with '-': give a commit SHA, tag or branch`},
		{"/perfbot bisect main --output=/tmp/x", `unknown option "--output": bisect takes phase=P`},
		{"/perfbot bisect v1.4.0..v1.5.0 main", `GOOD revision "v1.4.0..v1.5.0" contains '..': give one commit, not a range`},
		{"/perfbot bisect v1.4.0 main...dev", `BAD revision "main...dev" contains '..': give one commit, not a range`},
		{"/perfbot bisect a\x00b main", `GOOD revision "a\x00b" contains a blank, control or invisible character: give a commit SHA, tag or branch`},
		{"/perfbot bisect ma\u200bin v1", `GOOD revision "ma\u200bin" contains a blank, control or invisible character: give a commit SHA, tag or branch`},
		{"/perfbot bisect " + long + " main", `GOOD revision is 300 bytes long: give at most 255`},
		{"/perfbot bisect main main", `GOOD and BAD are both "main": give two different revisions`},
		{"/perfbot bisect a b phase=", `phase needs a name, such as phase=msm_h`},
		{"/perfbot bisect a b phase=-x", `phase "-x" is not a phase name: use letters, digits, '_', '-' and '.', such as phase=msm_h`},
		{"/perfbot bisect a b phase=msm;h", `phase "msm;h" is not a phase name: use letters, digits, '_', '-' and '.', such as phase=msm_h`},
		{"/perfbot bisect a b phase=x phase=y", `phase given twice: give it once`},
		{"/perfbot bisect a b count=3", `unknown option "count": bisect takes phase=P`},
		{"/perfbot bisect a b phase=msm h", `unexpected argument "h": bisect takes two revisions, GOOD and BAD`},
		{"/perfbot benchmark", `unknown command "benchmark": perfbot knows run, bisect and help`},
		{"/perfbot Run", `unknown command "Run": perfbot knows run, bisect and help`},
		{"/perfbot " + long, `unknown command "` + long[:40] + `"…: perfbot knows run, bisect and help`},
	}
	for _, tt := range tests {
		cmd, ok := ParseCommand(tt.body)
		if !ok {
			t.Errorf("ParseCommand(%q): ok = false, want a command with Err", tt.body)
			continue
		}
		if cmd.Err == nil {
			t.Errorf("ParseCommand(%q): Err = nil (run %+v, bisect %+v), want %q", tt.body, cmd.Run, cmd.Bisect, tt.wantErr)
			continue
		}
		if got := cmd.Err.Error(); got != tt.wantErr {
			t.Errorf("ParseCommand(%q): Err = %q, want %q", tt.body, got, tt.wantErr)
		}
		if cmd.Run != nil || cmd.Bisect != nil {
			t.Errorf("ParseCommand(%q): Run = %+v, Bisect = %+v with Err set, want both nil", tt.body, cmd.Run, cmd.Bisect)
		}
	}
}

func TestUsageNamesEveryCommand(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"/perfbot run [count=N]", "/perfbot bisect GOOD BAD [phase=P]", "/perfbot help", "2 to 1000"} {
		if !strings.Contains(Usage, want) {
			t.Errorf("Usage lacks %q:\n%s", want, Usage)
		}
	}
}

func TestPushToDefaultBranch(t *testing.T) {
	t.Parallel()
	const sha = "b7a0c3e5d9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8"
	tests := []struct {
		name string
		p    Push
		want bool
	}{
		{"push to main", Push{Ref: "refs/heads/main", After: sha, DefaultBranch: "main"}, true},
		{"push to another branch", Push{Ref: "refs/heads/dev", After: sha, DefaultBranch: "main"}, false},
		{"tag named like the branch", Push{Ref: "refs/tags/main", After: sha, DefaultBranch: "main"}, false},
		{"main deleted", Push{Ref: "refs/heads/main", After: strings.Repeat("0", 40), DefaultBranch: "main"}, false},
		{"main deleted, SHA-256 repository", Push{Ref: "refs/heads/main", After: strings.Repeat("0", 64), DefaultBranch: "main"}, false},
		{"default branch unknown", Push{Ref: "refs/heads/", After: sha}, false},
	}
	for _, tt := range tests {
		if got := tt.p.ToDefaultBranch(); got != tt.want {
			t.Errorf("%s: ToDefaultBranch() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
