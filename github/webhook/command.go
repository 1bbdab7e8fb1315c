package webhook

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Usage is the help for /perfbot commands, in GitHub Markdown, to reply to
// "/perfbot help" and after a Command's Err. Its command lines sit inside a
// code fence, so ParseCommand does not read perfbot's own reply as a
// command.
const Usage = "perfbot commands, on a line of their own in a pull request comment:\n" +
	"\n" +
	"```\n" +
	"/perfbot run [count=N]              benchmark the head against the base, N runs a side (2 to 1000)\n" +
	"/perfbot bisect GOOD BAD [phase=P]  find the first commit after GOOD, up to BAD, that is slower (in phase P only)\n" +
	"/perfbot help                       show this help\n" +
	"```\n" +
	"\n" +
	"GOOD and BAD are commit SHAs, tags or branch names; P is a phase name such as msm_h.\n"

// Bounds of RunCommand.Count.
const (
	minCount = 2
	maxCount = 1000
)

const (
	keyword     = "/perfbot"
	maxRevision = 255 // git refuses longer ref names on most file systems
	maxPhase    = 64
)

// ParseCommand finds the first /perfbot command in a comment body. ok is
// false when there is none; otherwise cmd has Run, Bisect or Err set (or
// none of them, for help) and its other fields are empty.
//
// A command is a line that starts with "/perfbot", in lower case, after any
// spaces or tabs, followed by the end of the line or a blank. Lines in
// fenced code blocks (``` or ~~~) are skipped and quoted lines ("> ...")
// do not start with the keyword, so quoting someone's command or
// perfbot's own Usage does not run it.
// Only the first command counts; the rest of the comment is ignored.
//
// GOOD and BAD must look like one git revision: not starting with '-'
// (git would read an option), without "..", blanks, control or invisible
// characters, at most 255 bytes. A token holding '=' is an option, never
// a revision.
func ParseCommand(body string) (cmd *Command, ok bool) {
	var fence string // the open fence's marker run, "" outside a fence
	for line := range strings.Lines(body) {
		line = strings.TrimLeft(strings.TrimRight(line, "\r\n"), " \t")
		if fence != "" {
			if closesFence(line, fence) {
				fence = ""
			}
			continue
		}
		if f := openingFence(line); f != "" {
			fence = f
			continue
		}
		rest, found := strings.CutPrefix(line, keyword)
		if !found || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		return parseArgs(strings.Fields(rest)), true
	}
	return nil, false
}

// openingFence returns the run of three or more backticks or tildes that
// opens a fenced code block at the start of line, or "".
func openingFence(line string) string {
	if line == "" || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	n := len(line) - len(strings.TrimLeft(line, line[:1]))
	if n < 3 {
		return ""
	}
	return line[:n]
}

// closesFence reports whether line closes a block opened by fence: a run
// of the same character at least as long, followed only by blanks.
func closesFence(line, fence string) bool {
	rest := strings.TrimLeft(line, fence[:1])
	return len(line)-len(rest) >= len(fence) && strings.TrimSpace(rest) == ""
}

func parseArgs(args []string) *Command {
	cmd := new(Command)
	if len(args) == 0 || args[0] == "help" {
		return cmd
	}
	switch sub, args := args[0], args[1:]; sub {
	case "run":
		cmd.Run, cmd.Err = parseRun(args)
	case "bisect":
		cmd.Bisect, cmd.Err = parseBisect(args)
	default:
		cmd.Err = fmt.Errorf("unknown command %s: perfbot knows run, bisect and help", quote(sub))
	}
	if cmd.Err != nil {
		cmd.Run, cmd.Bisect = nil, nil
	}
	return cmd
}

func parseRun(args []string) (*RunCommand, error) {
	pos, opts, err := splitArgs("run", args, "count=N")
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, fmt.Errorf("unexpected argument %s: run takes only count=N", quote(pos[0]))
	}
	run := new(RunCommand)
	if v, ok := opts["count"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < minCount || n > maxCount {
			return nil, fmt.Errorf("count must be a whole number from %d to %d, not %s", minCount, maxCount, quote(v))
		}
		run.Count = n
	}
	return run, nil
}

func parseBisect(args []string) (*BisectCommand, error) {
	pos, opts, err := splitArgs("bisect", args, "phase=P")
	if err != nil {
		return nil, err
	}
	if len(pos) < 2 {
		return nil, errors.New("bisect needs two revisions: /perfbot bisect GOOD BAD")
	}
	if len(pos) > 2 {
		return nil, fmt.Errorf("unexpected argument %s: bisect takes two revisions, GOOD and BAD", quote(pos[2]))
	}
	b := &BisectCommand{Good: pos[0], Bad: pos[1], Phase: opts["phase"]}
	if err := checkRevision("GOOD", b.Good); err != nil {
		return nil, err
	}
	if err := checkRevision("BAD", b.Bad); err != nil {
		return nil, err
	}
	if b.Good == b.Bad {
		return nil, fmt.Errorf("GOOD and BAD are both %s: give two different revisions", quote(b.Good))
	}
	if _, ok := opts["phase"]; ok {
		if err := checkPhase(b.Phase); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// splitArgs separates positional arguments from key=value options, and
// refuses options other than those in forms ("count=N") and options given
// twice.
func splitArgs(sub string, args []string, forms ...string) (pos []string, opts map[string]string, err error) {
	opts = make(map[string]string)
	for _, a := range args {
		k, v, isOpt := strings.Cut(a, "=")
		if !isOpt {
			pos = append(pos, a)
			continue
		}
		if !slices.ContainsFunc(forms, func(f string) bool { return strings.HasPrefix(f, k+"=") }) {
			return nil, nil, fmt.Errorf("unknown option %s: %s takes %s", quote(k), sub, strings.Join(forms, ", "))
		}
		if _, dup := opts[k]; dup {
			return nil, nil, fmt.Errorf("%s given twice: give it once", k)
		}
		opts[k] = v
	}
	return pos, opts, nil
}

// checkRevision refuses what cannot be a single git revision, or could be
// read by git as an option.
func checkRevision(which, rev string) error {
	switch {
	case strings.HasPrefix(rev, "-"):
		return fmt.Errorf("%s revision %s starts with '-': give a commit SHA, tag or branch", which, quote(rev))
	case strings.Contains(rev, ".."):
		return fmt.Errorf("%s revision %s contains '..': give one commit, not a range", which, quote(rev))
	case strings.ContainsFunc(rev, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
	}):
		return fmt.Errorf("%s revision %s contains a blank, control or invisible character: give a commit SHA, tag or branch", which, quote(rev))
	case len(rev) > maxRevision:
		return fmt.Errorf("%s revision is %d bytes long: give at most %d", which, len(rev), maxRevision)
	}
	return nil
}

// checkPhase accepts a phase name: letters, digits, '_', '-' and '.', not
// starting with '-'.
func checkPhase(p string) error {
	if p == "" {
		return errors.New("phase needs a name, such as phase=msm_h")
	}
	ok := len(p) <= maxPhase && p[0] != '-' && !strings.ContainsFunc(p, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.'))
	})
	if !ok {
		return fmt.Errorf("phase %s is not a phase name: use letters, digits, '_', '-' and '.', such as phase=msm_h", quote(p))
	}
	return nil
}

// quote quotes user input for an error message, cut to a readable length.
func quote(s string) string {
	const limit = 40
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]) + "…"
}
