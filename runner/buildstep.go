package runner

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/runner/workspace"
)

// A BuildStep is one command of a Config's build (an item of YAML build:
// an argument list, or a mapping with run: and more).
//
// A step with Inputs is declared: it promises that its Outputs depend on
// nothing of the repository but the files Inputs names. Such a step runs
// in a directory that holds those files alone (${PERFBOT_SRC} for it),
// with ${PERFBOT_OUT} an empty directory of its own; its Outputs are kept
// in a cache under the data directory, keyed by the step (command, env,
// declarations), its environment and the git object names of its input
// files, and are copied into the revision's ${PERFBOT_OUT}. A later build
// of any commit whose step has the same key reuses them without running
// it. A step without Inputs runs as every build step did before: in the
// revision's worktree, into its ${PERFBOT_OUT}, cached only with the
// whole build (per commit and Config.BuildHash).
type BuildStep struct {
	// Run is the command, an argument list (YAML: the list itself, or
	// run:).
	Run []string `json:"run"`
	// Env is added to the step's environment (env, a map; values are
	// expanded; PERFBOT_SRC and PERFBOT_OUT are reserved). A step's
	// MAKEFLAGS here keeps perfbot from setting its own.
	Env map[string]string `json:"env,omitempty"`
	// Inputs are the repository paths the step reads (inputs): files or
	// directories, relative to the repository's top, or globs (*, ?, [...]
	// within a path element, ** for any number of elements); "." is the
	// whole tree, and an entry that starts with ! leaves out what it
	// matches. For each file the last entry that matches it decides.
	// Every entry without ! must match a file at each revision built.
	Inputs []string `json:"inputs,omitempty"`
	// Outputs are the files or directories, relative to ${PERFBOT_OUT},
	// that a declared step makes and a reuse copies (outputs). Each must
	// be there when the step ends.
	Outputs []string `json:"outputs,omitempty"`
}

// Declared reports whether the step declares its inputs, so that its
// outputs may be reused across revisions.
func (s BuildStep) Declared() bool { return len(s.Inputs) > 0 }

// MarshalJSON writes a step that has only Run as the argument list
// itself, as build commands were written before steps could declare
// anything: the Hash and BuildHash of every such config stay what they
// were, and so do its history and its cached builds.
func (s BuildStep) MarshalJSON() ([]byte, error) {
	if len(s.Env) == 0 && len(s.Inputs) == 0 && len(s.Outputs) == 0 {
		if s.Run == nil {
			return []byte("null"), nil
		}
		return json.Marshal(s.Run)
	}
	type plain BuildStep
	return json.Marshal(plain(s))
}

// UnmarshalJSON reads either form MarshalJSON writes.
func (s *BuildStep) UnmarshalJSON(data []byte) error {
	var run []string
	if err := json.Unmarshal(data, &run); err == nil {
		*s = BuildStep{Run: run}
		return nil
	}
	type plain BuildStep
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*s = BuildStep(p)
	return nil
}

// Steps returns build steps that run each argument list, declaring
// nothing: Config.Build for commands written in code.
func Steps(commands ...[]string) []BuildStep {
	steps := make([]BuildStep, len(commands))
	for i, c := range commands {
		steps[i] = BuildStep{Run: c}
	}
	return steps
}

// stepName names build step i for messages: `build[1] (make cuda-lib
// 'BUILD=${PERFBOT_OUT}')`.
func stepName(i int, s BuildStep) string {
	if len(s.Run) == 0 {
		return fmt.Sprintf("build[%d]", i)
	}
	return fmt.Sprintf("build[%d] (%s)", i, quoteArgs(s.Run))
}

// rawStep is an item of YAML build: an argument list or a mapping.
type rawStep struct {
	step BuildStep
}

// stepKeys are the keys of a build step written as a mapping.
var stepKeys = []string{"run", "env", "inputs", "outputs"}

// UnmarshalYAML reads [prog, args…] or {run: [...], env: {...}, inputs:
// [...], outputs: [...]}, and refuses, with its line, an unknown key and
// an input or output path that can never be right.
func (r *rawStep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		var run argList
		if err := run.UnmarshalYAML(n); err != nil {
			return err
		}
		r.step = BuildStep{Run: run}
		return nil
	}
	var errs []string
	bad := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
	}
	var s BuildStep
	hasRun := false
	what := "build step"
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "run" {
			var run argList
			if run.UnmarshalYAML(n.Content[i+1]) == nil && len(run) > 0 {
				what = fmt.Sprintf("build step (%s)", quoteArgs(run))
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "run":
			var run argList
			if err := run.UnmarshalYAML(v); err != nil {
				return err
			}
			s.Run, hasRun = run, true
		case "env":
			if v.Kind != yaml.MappingNode || v.Decode(&s.Env) != nil {
				bad(v.Line, "%s: env: a map of NAME: value, not %s", what, kindName(v))
			}
		case "inputs", "outputs":
			paths, lines, err := pathList(what, k.Value, v)
			if err != nil {
				return err
			}
			for j, p := range paths {
				reason := checkOutput(p)
				if k.Value == "inputs" {
					reason = checkInput(p)
				}
				if reason != "" {
					bad(lines[j], "%s: %s: %q %s", what, k.Value, p, reason)
				}
			}
			if k.Value == "inputs" {
				s.Inputs = paths
			} else {
				s.Outputs = paths
			}
		default:
			hint := ""
			if near := nearest(k.Value, stepKeys); near != "" {
				hint = fmt.Sprintf("did you mean %q? ", near)
			}
			bad(k.Line, "unknown key %q in a build step; %sknown keys: %s", k.Value, hint, strings.Join(stepKeys, ", "))
		}
	}
	if !hasRun {
		bad(n.Line, "a build step written as a mapping needs run: [program, args...]")
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	r.step = s
	return nil
}

// pathList reads inputs: or outputs:, a list of paths, and their lines.
func pathList(what, key string, n *yaml.Node) ([]string, []int, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, nil, &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: %s: %s: a list of paths, not %s; write %s: [cuda/, Makefile]", n.Line, what, key, kindName(n), key)}}
	}
	var paths []string
	var lines []int
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return nil, nil, &yaml.TypeError{Errors: []string{fmt.Sprintf(
				"line %d: %s: %s: a path must be a single value, not %s", c.Line, what, key, kindName(c))}}
		}
		paths = append(paths, c.Value)
		lines = append(lines, c.Line)
	}
	return paths, lines, nil
}

// checkStep notes what is wrong with build step i.
func checkStep(p *problems, i int, s BuildStep) {
	field := fmt.Sprintf("build[%d]", i)
	if len(s.Run) == 0 || s.Run[0] == "" {
		p.add("%s: empty command; write the program and its arguments, as [go, build, ./...]", field)
	}
	checkVars(p, field, s.Run)
	name := stepName(i, s)
	for k, v := range s.Env {
		switch {
		case !envName.MatchString(k):
			p.add("%s.env: %q is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)", name, k)
		case k == "PERFBOT_SRC" || k == "PERFBOT_OUT":
			p.add("%s.env: %s is set by perfbot; remove it", name, k)
		}
		checkVars(p, name+".env."+k, []string{v})
	}
	for j, in := range s.Inputs {
		if reason := checkInput(in); reason != "" {
			p.add("%s.inputs[%d]: %q %s", name, j, in, reason)
		}
	}
	for j, out := range s.Outputs {
		if reason := checkOutput(out); reason != "" {
			p.add("%s.outputs[%d]: %q %s", name, j, out, reason)
		}
	}
	switch {
	case len(s.Inputs) > 0 && len(s.Outputs) == 0:
		p.add("%s: inputs without outputs; a reused step gives only its outputs: list what it makes in ${PERFBOT_OUT}, as outputs: [libx.so]", name)
	case len(s.Outputs) > 0 && len(s.Inputs) == 0:
		p.add("%s: outputs without inputs; list the repository paths the step reads, as inputs: [src/, Makefile], or leave outputs out", name)
	case len(s.Inputs) > 0 && !slices.ContainsFunc(s.Inputs, func(in string) bool { return !strings.HasPrefix(in, "!") }):
		p.add("%s.inputs: every entry starts with !, so none takes a file in; name what the step reads, as [src/, Makefile]", name)
	}
}

// checkInput says what is wrong with an inputs: entry, or "".
func checkInput(in string) string {
	p := strings.TrimPrefix(in, "!")
	if p == "" {
		return "is empty; write a path relative to the repository's top, as cuda/"
	}
	return checkRelPath(p, "the repository's top", "cuda/", true)
}

// checkOutput says what is wrong with an outputs: entry, or "".
func checkOutput(out string) string {
	if out == "" {
		return "is empty; write a path relative to ${PERFBOT_OUT}, as libx.so"
	}
	if strings.ContainsAny(out, "*?[") {
		return "is a glob; name each output file or directory, as libx.so or include/"
	}
	if r := checkRelPath(out, "${PERFBOT_OUT}", "libx.so", false); r != "" {
		return r
	}
	if strings.TrimSuffix(out, "/") == "." {
		return "is ${PERFBOT_OUT} itself; name the files or directories the step makes"
	}
	return ""
}

// checkRelPath says what is wrong with p as a slash-separated path
// relative to a directory (what it is relative to, for the message), or
// "": no absolute path, no .., no empty, . or doubled elements.
func checkRelPath(p, relativeTo, example string, glob bool) string {
	if strings.Contains(p, "${PERFBOT_") || strings.HasPrefix(p, "$") {
		return fmt.Sprintf("names a variable; write a path relative to %s, as %s", relativeTo, example)
	}
	if path.IsAbs(p) {
		return fmt.Sprintf("is absolute; write a path relative to %s, as %s", relativeTo, example)
	}
	trimmed := strings.TrimSuffix(p, "/")
	if trimmed == "." {
		return ""
	}
	for _, el := range strings.Split(trimmed, "/") {
		switch el {
		case "..":
			return fmt.Sprintf("leaves %s (..); name a path inside it", relativeTo)
		case ".", "":
			return fmt.Sprintf("is not a clean path; write %q", path.Clean(p))
		}
		if glob {
			if _, err := path.Match(el, ""); err != nil {
				return fmt.Sprintf("is not a valid glob (%v); * and ? match within a path element, [abc] one of its characters, ** any number of elements", err)
			}
		}
	}
	return ""
}

// isGlob reports whether an input path is a glob.
func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// inputMatches reports whether the input pattern pat (without its !)
// matches the file name or one of its directories.
func inputMatches(pat, name string) bool {
	pat = strings.TrimSuffix(pat, "/")
	if pat == "." {
		return true
	}
	return matchLead(strings.Split(pat, "/"), strings.Split(name, "/"))
}

// matchLead reports whether the pattern elements pat match name's first
// elements (name itself or one of its directories); ** matches any number
// of elements.
func matchLead(pat, name []string) bool {
	if len(pat) == 0 {
		return true
	}
	if pat[0] == "**" {
		for k := 0; k <= len(name); k++ {
			if matchLead(pat[1:], name[k:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], name[0]); !ok {
		return false
	}
	return matchLead(pat[1:], name[1:])
}

// selectInputs returns the files of tree that inputs take in, sorted by
// path, and what is wrong with inputs at this tree: each entry without !
// that matches no file.
func selectInputs(inputs []string, tree []workspace.TreeEntry) (files []workspace.TreeEntry, missing []string) {
	matched := make([]bool, len(inputs))
	for _, e := range tree {
		take := false
		for j, in := range inputs {
			pat, exclude := strings.CutPrefix(in, "!")
			if inputMatches(pat, e.Path) {
				matched[j] = true
				take = !exclude
			}
		}
		if take {
			files = append(files, e)
		}
	}
	for j, in := range inputs {
		if !matched[j] && !strings.HasPrefix(in, "!") {
			missing = append(missing, in)
		}
	}
	sort.Slice(files, func(a, b int) bool { return files[a].Path < files[b].Path })
	return files, missing
}
