package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/runner/workspace"
)

// A stepPlan is what a build needs to know of a declared step at one
// commit: the input files it reads there and its cache key.
type stepPlan struct {
	files []workspace.TreeEntry
	key   string
}

// plan resolves the inputs of cfg's declared steps in commit sha's tree
// and returns their plans, indexed like cfg.Build (the zero plan for an
// undeclared step), or nil when no step is declared. An entry without !
// that matches no file, inputs that take in no file and a submodule
// among them are refused: the error wraps ErrInvalidConfig and names
// every such step and path.
func (b *Builder) plan(ctx context.Context, ws *workspace.Workspace, sha string, cfg *Config) ([]stepPlan, error) {
	plans, p, err := b.planProblems(ctx, ws, sha, cfg)
	if err != nil {
		return nil, err
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return plans, nil
}

// planProblems is plan, with what is wrong with the inputs apart from
// the error (the repository unreadable).
func (b *Builder) planProblems(ctx context.Context, ws *workspace.Workspace, sha string, cfg *Config) ([]stepPlan, problems, error) {
	if !slices.ContainsFunc(cfg.Build, BuildStep.Declared) {
		return nil, nil, nil
	}
	tree, err := ws.Tree(ctx, sha)
	if err != nil {
		return nil, nil, err
	}
	passed := b.passed()
	plans := make([]stepPlan, len(cfg.Build))
	var p problems
	for i, st := range cfg.Build {
		if !st.Declared() {
			continue
		}
		files, missing := selectInputs(st.Inputs, tree)
		for _, m := range missing {
			if isGlob(m) {
				p.add("%s.inputs: %q matches no file of commit %s; fix the glob, or remove it", stepName(i, st), m, short(sha))
			} else {
				p.add("%s.inputs: %q is not in commit %s; name a file or directory that is (relative to the repository's top), "+
					"or a directory or glob that holds it", stepName(i, st), m, short(sha))
			}
		}
		if len(missing) == 0 && len(files) == 0 {
			p.add("%s.inputs: %q take in no file of commit %s: the entries with ! leave out all the others take in",
				stepName(i, st), st.Inputs, short(sha))
		}
		for _, f := range files {
			if f.Submodule() {
				p.add("%s.inputs: %s is a submodule of commit %s, whose files a declared step cannot read; leave it out with !%s, or do not declare the step",
					stepName(i, st), f.Path, short(sha), f.Path)
			}
		}
		plans[i] = stepPlan{files: files, key: stepKey(st, passed, files)}
	}
	return plans, p, nil
}

// Check resolves the inputs of cfg's declared steps at commit, as a build
// of it would before running anything: an error wraps ErrInvalidConfig
// when inputs name what is not there (see BuildStep.Inputs).
func (b *Builder) Check(ctx context.Context, ws *workspace.Workspace, commit workspace.Commit, cfg *Config) error {
	_, err := b.plan(ctx, ws, commit.SHA, cfg)
	return err
}

// stepKey is a declared step's cache key: the SHA-256 of the step as
// written (command, env, inputs, outputs), the environment it gets from
// perfbot's own (passed), and the mode, object name and path of every
// input file. The commit is not part of it, nor are ${PERFBOT_SRC},
// ${PERFBOT_OUT}, MAKEFLAGS as perfbot sets it, and the owner mark, which
// differ from build to build without changing what a step makes.
func stepKey(st BuildStep, passed []string, files []workspace.TreeEntry) string {
	h := sha256.New()
	head, _ := json.Marshal(struct { // plain data always marshals
		Step BuildStep `json:"step"`
		Env  []string  `json:"env"`
	}{st, passed})
	h.Write([]byte("perfbot build step v1\n"))
	h.Write(head)
	h.Write([]byte{'\n'})
	for _, f := range files {
		fmt.Fprintf(h, "%s %s\t%s\x00", f.Mode, f.OID, f.Path)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// stepRecord is the content of a declared step's marker file.
type stepRecord struct {
	Key      string        `json:"key"`
	Run      []string      `json:"run"`
	Inputs   []string      `json:"inputs"`
	Outputs  []string      `json:"outputs"`
	Files    int           `json:"files"`
	SHA      string        `json:"sha"` // the commit it was built for
	Finished time.Time     `json:"finished"`
	Duration time.Duration `json:"duration_ns"`
	// Reuses counts the builds that reused the outputs, checks included:
	// Config.BuildVerify checks every so many.
	Reuses int `json:"reuses"`
	// Checks and Mismatches count the re-runs that checked a reuse and
	// those that made other bytes.
	Checks     int `json:"checks,omitempty"`
	Mismatches int `json:"mismatches,omitempty"`
}

// runDeclared makes declared step i's outputs in res.OutDir: copied from
// the cache when a build made them for the same key, else made by the
// step run in a directory of its input files alone, then kept in the
// cache. Every cfg.BuildVerify-th reuse runs the step instead and
// compares. It returns the command as run (or as it would have run) and,
// like runBuildCommand, the reason it failed or an error.
func (b *Builder) runDeclared(ctx context.Context, log *slog.Logger, ws *workspace.Workspace, cfg *Config, i int, plan stepPlan,
	res *BuildResult, out io.Writer, jobs int) (argv []string, reason string, err error) {
	st := cfg.Build[i]
	name := stepName(i, st)
	dir := filepath.Join(ws.DataDir(), "builds", "steps", plan.key[:32])
	src, tmpOut := dir+".src", dir+".out"
	vars := Vars{Src: src, Out: tmpOut}
	argv = vars.ExpandAll(st.Run)
	unlock, err := workspace.Lock(ctx, dir+".lock")
	if err != nil {
		return argv, "", err
	}
	defer unlock()
	log = log.With("step", i, "key", plan.key[:12])

	rec, cached := readStepMarker(dir, plan.key)
	check := false
	if cached {
		rec.Reuses++
		check = cfg.BuildVerify > 0 && rec.Reuses%cfg.BuildVerify == 0
		if !check {
			if err := writeJSONFile(dir+".done", rec); err != nil {
				return argv, "", err
			}
			fmt.Fprintf(out, "$ %s\nperfbot: %s: reused the outputs made for %s (its %d input files are the same; key %s)\n",
				quoteArgs(argv), name, short(rec.SHA), len(plan.files), plan.key[:12])
			if err := copyOutputs(dir, st.Outputs, res.OutDir); err != nil {
				return argv, "", err
			}
			res.Steps = append(res.Steps, StepResult{Index: i, Key: plan.key, Reused: true, BuiltFor: rec.SHA})
			log.Info("build step reused", "built_for", short(rec.SHA))
			return argv, "", nil
		}
	}

	for _, d := range []string{src, tmpOut} {
		if err := os.RemoveAll(d); err != nil {
			return argv, "", err
		}
		defer os.RemoveAll(d)
	}
	if err := os.MkdirAll(tmpOut, 0o755); err != nil {
		return argv, "", err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return argv, "", err
	}
	if err := ws.WriteFiles(ctx, plan.files, src); err != nil {
		return argv, "", fmt.Errorf("%s: %w", name, err)
	}
	why := "its inputs were not built before"
	if check {
		why = fmt.Sprintf("reuse %d of its outputs: build_verify %d checks this one", rec.Reuses, cfg.BuildVerify)
	}
	fmt.Fprintf(out, "$ %s\nperfbot: %s runs in a directory of its %d input files alone (%s)\n", quoteArgs(argv), name, len(plan.files), why)
	start := time.Now()
	reason, err = runBuildCommand(ctx, src, argv, b.environ(st, vars, jobs), cfg.BuildTimeout, out)
	if err != nil || reason != "" {
		return argv, reason, err
	}
	for _, o := range st.Outputs {
		if _, err := os.Lstat(filepath.Join(tmpOut, filepath.FromSlash(o))); err != nil {
			return argv, fmt.Sprintf("it did not make %s in ${PERFBOT_OUT}, which its outputs: declare", o), nil
		}
	}
	fresh := dir + ".new"
	if err := os.RemoveAll(fresh); err != nil {
		return argv, "", err
	}
	defer os.RemoveAll(fresh)
	if err := moveOutputs(tmpOut, st.Outputs, fresh); err != nil {
		return argv, "", err
	}
	if left := filesUnder(tmpOut); len(left) > 0 {
		fmt.Fprintf(out, "perfbot: %s: not kept, not being in its outputs: %s\n", name, strings.Join(left, ", "))
	}
	sr := StepResult{Index: i, Key: plan.key, Checked: check}
	if check {
		sr.Reused, sr.BuiltFor = true, rec.SHA
		rec.Checks++
		sr.Mismatch, err = diffOutputs(dir, fresh, st.Outputs)
		if err != nil {
			return argv, "", err
		}
		if len(sr.Mismatch) == 0 {
			fmt.Fprintf(out, "perfbot: %s: the check made the same outputs, byte for byte, as those made for %s\n", name, short(rec.SHA))
			log.Info("build step checked", "built_for", short(rec.SHA))
		} else {
			rec.Mismatches++
			w := fmt.Sprintf("build step %s: run again to check its reuse (build_verify: %d), it made other bytes than the outputs made for %s with the same inputs (%s differ): "+
				"its inputs: may leave out a file it reads, or what it makes depends on more than its inputs (a compiler or library that changed, the time, the machine); "+
				"this build uses, and the cache keeps, the new outputs",
				name, cfg.BuildVerify, short(rec.SHA), strings.Join(sr.Mismatch, ", "))
			res.Warnings = append(res.Warnings, w)
			fmt.Fprintf(out, "perfbot: %s\n", w)
			log.Warn("build step check: outputs differ", "built_for", short(rec.SHA), "differ", sr.Mismatch)
		}
	}
	if !check || len(sr.Mismatch) > 0 {
		if err := replaceDir(fresh, dir); err != nil {
			return argv, "", err
		}
	}
	if !check {
		rec = stepRecord{Key: plan.key, Run: st.Run, Inputs: st.Inputs, Outputs: st.Outputs, Files: len(plan.files),
			SHA: res.SHA, Finished: time.Now().UTC(), Duration: time.Since(start)}
	}
	if err := writeJSONFile(dir+".done", rec); err != nil {
		return argv, "", err
	}
	if err := copyOutputs(dir, st.Outputs, res.OutDir); err != nil {
		return argv, "", err
	}
	res.Steps = append(res.Steps, sr)
	if !check {
		log.Info("build step made", "duration", time.Since(start).Round(time.Millisecond))
	}
	return argv, "", nil
}

// readStepMarker returns the record of key's cached outputs in dir, when
// they are there.
func readStepMarker(dir, key string) (stepRecord, bool) {
	data, err := os.ReadFile(dir + ".done")
	if err != nil {
		return stepRecord{}, false
	}
	var rec stepRecord
	if json.Unmarshal(data, &rec) != nil || rec.Key != key {
		return stepRecord{}, false
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return stepRecord{}, false
	}
	return rec, true
}

// writeJSONFile writes v to path whole or not at all.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// topOutputs returns outputs without those inside another (lib inside
// lib/ or ., a repeated path), slash-trimmed, in order.
func topOutputs(outputs []string) []string {
	var top []string
	for _, o := range outputs {
		o = strings.TrimSuffix(o, "/")
		inside := slices.ContainsFunc(outputs, func(other string) bool {
			other = strings.TrimSuffix(other, "/")
			return other != o && strings.HasPrefix(o, other+"/")
		})
		if !inside && !slices.Contains(top, o) {
			top = append(top, o)
		}
	}
	return top
}

// moveOutputs moves outputs from the directory from into the new
// directory to, at the same relative paths.
func moveOutputs(from string, outputs []string, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, o := range topOutputs(outputs) {
		dst := filepath.Join(to, filepath.FromSlash(o))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(from, filepath.FromSlash(o)), dst); err != nil {
			return err
		}
	}
	return nil
}

// replaceDir puts the directory fresh in old's place.
func replaceDir(fresh, old string) error {
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	return os.Rename(fresh, old)
}

// copyOutputs copies outputs from the cache directory from into the
// build's output directory to, replacing what an earlier step put there.
// They are copies, not links: a later step that changes a file in
// ${PERFBOT_OUT} cannot change the cache.
func copyOutputs(from string, outputs []string, to string) error {
	for _, o := range topOutputs(outputs) {
		dst := filepath.Join(to, filepath.FromSlash(o))
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := copyTree(filepath.Join(from, filepath.FromSlash(o)), dst); err != nil {
			return fmt.Errorf("copy build step output %s: %w", o, err)
		}
	}
	return nil
}

// copyTree copies the file, link or directory src to dst, keeping modes.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return fmt.Errorf("%s: not a file, link or directory", p)
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// filesUnder lists what is left in dir but directories, slash-separated
// and relative to it, at most 10 of them.
func filesUnder(dir string) []string {
	var left []string
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		n++
		if len(left) < 10 {
			rel, _ := filepath.Rel(dir, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if n > len(left) {
		left = append(left, fmt.Sprintf("and %d more", n-len(left)))
	}
	return left
}

// diffOutputs compares outputs under the directories a and b and returns
// the paths (relative to ${PERFBOT_OUT}) of files that are in one only,
// or differ in kind, mode bits or bytes.
func diffOutputs(a, b string, outputs []string) ([]string, error) {
	var diff []string
	for _, o := range topOutputs(outputs) {
		fa, err := fileSums(filepath.Join(a, filepath.FromSlash(o)), o)
		if err != nil {
			return nil, err
		}
		fb, err := fileSums(filepath.Join(b, filepath.FromSlash(o)), o)
		if err != nil {
			return nil, err
		}
		for p, s := range fa {
			if fb[p] != s {
				diff = append(diff, p)
			}
		}
		for p := range fb {
			if _, ok := fa[p]; !ok {
				diff = append(diff, p)
			}
		}
	}
	slices.Sort(diff)
	return diff, nil
}

// fileSums returns, for each file, link and directory under root, named
// by its path as rel/…, its kind, mode bits and the SHA-256 of its bytes
// (a link's target).
func fileSums(root, rel string) (map[string]string, error) {
	sums := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return nil
			}
			return err
		}
		r, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join(rel, r))
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := sha256.New()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h.Write([]byte(link))
		case d.Type().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		sums[name] = fmt.Sprintf("%v %x", info.Mode(), h.Sum(nil))
		return nil
	})
	return sums, err
}

// writeFileAtomic writes data to path whole or not at all: a temporary
// file, synced, renamed into place.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = io.Copy(f, bytes.NewReader(data))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
