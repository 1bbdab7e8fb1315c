package runner

// config_yaml.go reads .perfbot.yml: the YAML schema, the keys that check
// their own values where they stand (with the line), and ParseConfig,
// which fills in the defaults and validates the whole. config.go has what
// a Config is.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/perf/benchunit"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/stats"
	"github.com/perfbot/perfbot/runner/readers"
)

// The YAML schema. Pointers tell an absent key (take the default) from a
// zero (validate it).
type (
	rawConfig struct {
		Build         []rawStep      `yaml:"build"`
		BuildTimeout  *string        `yaml:"build_timeout"`
		Benchmarks    []rawBenchmark `yaml:"benchmarks"`
		Count         *int           `yaml:"count"`
		Warmup        *int           `yaml:"warmup"`
		MaxCount      *int           `yaml:"max_count"`
		Timeout       *string        `yaml:"timeout"`
		Thresholds    rawThresholds  `yaml:"thresholds"`
		PrimaryUnits  *[]string      `yaml:"primary_units"`
		Order         *oneWord       `yaml:"order"`
		BuildParallel *int           `yaml:"build_parallel"`
		BuildVerify   *int           `yaml:"build_verify"`
	}
	rawBenchmark struct {
		Name       string            `yaml:"name"`
		Command    argList           `yaml:"command"`
		Args       argList           `yaml:"args"`
		Env        map[string]string `yaml:"env"`
		Count      *int              `yaml:"count"`
		Warmup     *int              `yaml:"warmup"`
		Timeout    *string           `yaml:"timeout"`
		CPUs       cpuSpec           `yaml:"cpus"`
		CPUProfile string            `yaml:"cpuprofile"`
		MemProfile string            `yaml:"memprofile"`
		Callgrind  callgrindFlag     `yaml:"callgrind"`
		Resident   residentFlag      `yaml:"resident"`
		Format     formatName        `yaml:"format"`
		Pattern    linesPattern      `yaml:"pattern"`
		Stream     string            `yaml:"stream"`
		Unit       string            `yaml:"unit"`
		Path       string            `yaml:"path"`
	}
	rawThresholds struct {
		Alpha        *float64  `yaml:"alpha"`
		MinChangePct *float64  `yaml:"min_change_pct"`
		MinHistory   *int      `yaml:"min_history"`
		Spending     *oneWord  `yaml:"spending"`
		Paired       *bool     `yaml:"paired"`
		Headline     *oneWord  `yaml:"headline"`
		FailOn       *lineWord `yaml:"fail_on"`
	}
)

// An argList is a command or its arguments: a YAML list of scalars.
type argList []string

// UnmarshalYAML rejects a string where a list belongs, with advice.
func (a *argList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: a command is a list of arguments, not %s; write it as [go, build, ./cmd/x] "+
				"(no shell runs it; for shell syntax write [sh, -c, \"...\"])", n.Line, kindName(n))}}
	}
	args := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return &yaml.TypeError{Errors: []string{fmt.Sprintf(
				"line %d: an argument must be a single value, not %s; quote it", c.Line, kindName(c))}}
		}
		args = append(args, c.Value)
	}
	*a = args
	return nil
}

// A residentFlag is the resident key: true or false, nothing else.
type residentFlag bool

func (f *residentFlag) UnmarshalYAML(n *yaml.Node) error {
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: resident: %s is not true or false; write resident: true to keep one process a side "+
				"serving every run (docs/resident.md), or leave the key out", n.Line, kindName(n))}}
	}
	*f = residentFlag(v)
	return nil
}

// A callgrindFlag is the callgrind key: true or false, nothing else.
type callgrindFlag bool

// UnmarshalYAML accepts a YAML boolean only: "yes" and "on" are strings
// in YAML 1.2, and a string is a mistake here.
func (f *callgrindFlag) UnmarshalYAML(n *yaml.Node) error {
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: callgrind: %s is not true or false; write callgrind: true to count instructions "+
				"under valgrind's callgrind after the timed runs, or leave the key out", n.Line, kindName(n))}}
	}
	*f = callgrindFlag(v)
	return nil
}

// A formatName is a benchmark's format:, checked where it stands.
type formatName string

// UnmarshalYAML accepts go or one of readers.Formats, and says which are
// allowed, with the line, otherwise.
func (f *formatName) UnmarshalYAML(n *yaml.Node) error {
	allowed := append([]string{FormatGo}, readers.Formats...)
	if n.Kind != yaml.ScalarNode || !slices.Contains(allowed, n.Value) {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: format: %s is not one of %s (go, the default, is Go benchmark format)", n.Line, quotedNode(n), strings.Join(allowed, ", "))}}
	}
	*f = formatName(n.Value)
	return nil
}

// A linesPattern is format lines' pattern:, compiled where it stands.
type linesPattern string

// UnmarshalYAML accepts a regular expression with a named group value.
func (l *linesPattern) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: pattern: a regular expression, not %s", n.Line, kindName(n))}}
	}
	re, err := regexp.Compile(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: pattern: %v", n.Line, err)}}
	}
	if re.SubexpIndex("value") < 0 {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: pattern: %q has no group named value; mark the number with (?P<value>[0-9.]+), and the phase with (?P<phase>\\w+)", n.Line, n.Value)}}
	}
	*l = linesPattern(n.Value)
	return nil
}

// quotedNode names a scalar's value for an error, or its kind.
func quotedNode(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return kindName(n)
}

// A cpuSpec is a CPU affinity list, "2-5,8" or [2, 3, 4, 5, 8], or
// "auto".
type cpuSpec struct {
	list cpuList
	auto bool
}

// UnmarshalYAML parses "auto" or a CPU list.
func (c *cpuSpec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) == "auto" {
		c.auto = true
		return nil
	}
	return c.list.UnmarshalYAML(n)
}

// A cpuList is a CPU affinity list: "2-5,8" or [2, 3, 4, 5, 8].
type cpuList []int

// maxCPU bounds CPU numbers, as Linux's CONFIG_NR_CPUS does.
const maxCPU = 8192

// UnmarshalYAML parses a Linux CPU list string or a list of numbers.
func (l *cpuList) UnmarshalYAML(n *yaml.Node) error {
	bad := func(format string, args ...any) error {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: cpus: ", n.Line) + fmt.Sprintf(format, args...) +
			`; write a CPU list such as "2-5,8" or [2, 3, 4, 5, 8], or auto`}}
	}
	var cpus []int
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.TrimSpace(n.Value) == "" {
			return bad("empty")
		}
		for part := range strings.SplitSeq(n.Value, ",") {
			part = strings.TrimSpace(part)
			lo, hi, isRange := strings.Cut(part, "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := a, error(nil)
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || a < 0 || b < a || b >= maxCPU {
				return bad("%q is not a CPU number or range lo-hi", part)
			}
			for c := a; c <= b; c++ {
				cpus = append(cpus, c)
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			v, err := strconv.Atoi(c.Value)
			if c.Kind != yaml.ScalarNode || err != nil || v < 0 || v >= maxCPU {
				return bad("%q is not a CPU number", c.Value)
			}
			cpus = append(cpus, v)
		}
		if len(cpus) == 0 {
			return bad("empty list")
		}
	default:
		return bad("want a string or a list, not %s", kindName(n))
	}
	slices.Sort(cpus)
	*l = slices.Compact(cpus)
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return fmt.Sprintf("the string %q", n.Value)
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	}
	return "that"
}

// ParseConfig parses .perfbot.yml, fills in defaults and validates the
// result. YAML keys are checked: an unknown key is an error naming it
// and its line. Errors wrap ErrInvalidConfig.
func ParseConfig(data []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var raw rawConfig
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlProblems(err).err()
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: more than one YAML document (a line \"---\"); keep one", ErrInvalidConfig)
	}
	var p problems
	c := raw.resolve(&p)
	c.check(&p)
	if err := p.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// resolve turns the YAML into a Config with defaults filled in, noting
// values that do not parse.
func (r *rawConfig) resolve(p *problems) *Config {
	c := &Config{
		Count:        intOr(r.Count, defaultCount),
		Warmup:       intOr(r.Warmup, defaultWarmup),
		MaxCount:     intOr(r.MaxCount, defaultMaxCount),
		Timeout:      durationOr(p, "timeout", r.Timeout, defaultTimeout),
		BuildTimeout: durationOr(p, "build_timeout", r.BuildTimeout, defaultBuildTimeout),
		Thresholds: Thresholds{
			Alpha:        floatOr(r.Thresholds.Alpha, defaultAlpha),
			MinChangePct: floatOr(r.Thresholds.MinChangePct, 1.0),
			MinHistory:   intOr(r.Thresholds.MinHistory, 10),
			Spending:     wordOr(r.Thresholds.Spending, stats.SpendingOBrienFleming),
			Paired:       r.Thresholds.Paired != nil && *r.Thresholds.Paired,
			Headline:     wordOr(r.Thresholds.Headline, "total"),
			FailOn:       analysis.FailOnHeadline,
		},
		PrimaryUnits: []string{"sec/op"},
		Order:        wordOr(r.Order, OrderRandom),
	}
	if r.PrimaryUnits != nil {
		c.PrimaryUnits = *r.PrimaryUnits
	}
	if f := r.Thresholds.FailOn; f != nil {
		c.Thresholds.FailOn = string(f.word)
		if !slices.Contains(analysis.FailOns, c.Thresholds.FailOn) {
			p.add("line %d: thresholds.fail_on: %q is not one of %s; headline (the default) fails a check when a benchmark's headline series (thresholds.headline, default total) regresses, any-phase when any phase does",
				f.line, c.Thresholds.FailOn, strings.Join(analysis.FailOns, ", "))
		}
	}
	if c.Thresholds.Headline == "" {
		p.add("thresholds.headline: empty; name the phase each benchmark's verdict is about, such as total (the default)")
	}
	for _, st := range r.Build {
		c.Build = append(c.Build, st.step)
	}
	if r.BuildParallel != nil {
		c.BuildParallel = *r.BuildParallel
		if c.BuildParallel < 1 {
			p.add("build_parallel: %d is less than 1; write 1 to build one revision at a time, 2 to build base and head at once, "+
				"or leave it out (both at once on a host of 4 CPUs or more)", c.BuildParallel)
		}
	}
	if r.BuildVerify != nil {
		c.BuildVerify = *r.BuildVerify
	}
	for i, rb := range r.Benchmarks {
		c.Benchmarks = append(c.Benchmarks, Benchmark{
			Name:       rb.Name,
			Command:    rb.Command,
			Args:       rb.Args,
			Env:        rb.Env,
			Count:      intOr(rb.Count, c.Count),
			Warmup:     intOr(rb.Warmup, c.Warmup),
			Timeout:    durationOr(p, benchField(i, rb.Name, "timeout"), rb.Timeout, c.Timeout),
			CPUs:       rb.CPUs.list,
			CPUsAuto:   rb.CPUs.auto,
			CPUProfile: rb.CPUProfile,
			MemProfile: rb.MemProfile,
			Callgrind:  bool(rb.Callgrind),
			Resident:   bool(rb.Resident),
			Format:     string(rb.Format),
			Pattern:    string(rb.Pattern),
			Stream:     rb.Stream,
			Unit:       rb.Unit,
			Path:       rb.Path,
		})
	}
	c.normalize()
	return c
}

// Validate checks a Config made in code the way ParseConfig checks a
// parsed one; errors wrap ErrInvalidConfig.
func (c *Config) Validate() error {
	var p problems
	c.check(&p)
	return p.err()
}

var (
	benchName = regexp.MustCompile(`^[a-z0-9_-]+$`)
	envName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	varRef    = regexp.MustCompile(`\$\{?PERFBOT_[A-Za-z0-9_]*\}?`)
	flagName  = regexp.MustCompile(`^--?[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// check notes every problem of c.
func (c *Config) check(p *problems) {
	atLeast(p, "count", c.Count, 1)
	atLeast(p, "warmup", c.Warmup, 0)
	if c.MaxCount < c.Count {
		p.add("max_count: %d is less than count %d; raise max_count or lower count", c.MaxCount, c.Count)
	}
	positive(p, "timeout", c.Timeout)
	positive(p, "build_timeout", c.BuildTimeout)
	for i, st := range c.Build {
		checkStep(p, i, st)
	}
	if c.BuildParallel < 0 {
		p.add("build_parallel: %d is negative; write 1 to build one revision at a time, or leave it out", c.BuildParallel)
	}
	if c.BuildVerify < 0 {
		p.add("build_verify: %d is negative; write 20 to check every 20th reuse of a declared build step, or 0 (the default) for never", c.BuildVerify)
	}
	if len(c.Benchmarks) == 0 {
		p.add("benchmarks: none; add at least one, as\n" +
			"      benchmarks:\n        - name: prove\n          command: [\"${PERFBOT_OUT}/perfbot\", prove]")
	}
	seen := map[string]int{}
	for i := range c.Benchmarks {
		b := &c.Benchmarks[i]
		f := func(name string) string { return benchField(i, b.Name, name) }
		switch {
		case b.Name == "":
			p.add("%s: missing; give each benchmark a name of a-z, 0-9, _ and -", f("name"))
		case !benchName.MatchString(b.Name):
			p.add("%s: %q has characters other than a-z, 0-9, _ and -; rename it", f("name"), b.Name)
		}
		if j, dup := seen[b.Name]; dup && b.Name != "" {
			p.add("%s: %q is also the name of benchmarks[%d]; names must be unique", f("name"), b.Name, j)
		} else {
			seen[b.Name] = i
		}
		if len(b.Command) == 0 || b.Command[0] == "" {
			p.add("%s: missing; write the program and its arguments, as [\"${PERFBOT_OUT}/perfbot\", prove]", f("command"))
		}
		checkVars(p, f("command"), b.Command)
		checkVars(p, f("args"), b.Args)
		for name, value := range b.Env {
			switch {
			case !envName.MatchString(name):
				p.add("%s: %q is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)", f("env"), name)
			case name == "PERFBOT_SRC" || name == "PERFBOT_OUT":
				p.add("%s: %s is set by perfbot; remove it", f("env"), name)
			}
			checkVars(p, f("env."+name), []string{value})
		}
		// A value equal to the top-level one was checked there.
		if b.Count != c.Count {
			atLeast(p, f("count"), b.Count, 1)
			if b.Count > c.MaxCount {
				p.add("%s: %d is more than max_count %d; raise max_count or lower count", f("count"), b.Count, c.MaxCount)
			}
		}
		if b.Warmup != c.Warmup {
			atLeast(p, f("warmup"), b.Warmup, 0)
		}
		if b.Timeout != c.Timeout {
			positive(p, f("timeout"), b.Timeout)
		}
		for _, cpu := range b.CPUs {
			if cpu < 0 || cpu >= maxCPU {
				p.add("%s: %d is not a CPU number", f("cpus"), cpu)
			}
		}
		if rc := b.ReaderConfig(); rc != nil {
			if _, err := readers.New(*rc); err != nil {
				p.add("%s: %s", f("format"), strings.TrimPrefix(err.Error(), "readers: "))
			}
			if b.Callgrind {
				p.add("%s: callgrind counts the spans of a program that prints Go benchmark format; format %s has none: remove callgrind: true", f("callgrind"), b.Format)
			}
		} else if b.Pattern != "" || b.Stream != "" || b.Unit != "" || b.Path != "" {
			p.add("%s: pattern, stream, unit and path configure the other formats; Go benchmark format takes none (set format: lines, gbench, criterion, libtest or hyperfine)", f("format"))
		}
		if b.Resident && b.ReaderConfig() != nil {
			p.add("%s: a resident process's runs are read as Go benchmark format; format %s cannot be: remove resident: true", f("resident"), b.Format)
		}
		if b.Resident && b.MemProfile != "" {
			p.add("%s: a heap profile covers a whole process, and a resident one serves every run: remove memprofile or resident: true", f("resident"))
		}
		checkProfileFlag(p, f("cpuprofile"), "cpuprofile", b.CPUProfile, b)
		checkProfileFlag(p, f("memprofile"), "memprofile", b.MemProfile, b)
		if b.CPUProfile != "" && b.CPUProfile == b.MemProfile {
			p.add("%s: %q is also cpuprofile's flag; each profile needs its own flag, as --cpuprofile and --memprofile",
				f("memprofile"), b.MemProfile)
		}
	}
	t := c.Thresholds
	if !(t.Alpha > 0 && t.Alpha < 0.5) {
		p.add("thresholds.alpha: %v is not above 0 and below 0.5; use a false-alarm rate such as 0.05 (0.01 for fewer false alarms)", t.Alpha)
	}
	if !slices.Contains(stats.Spendings, t.Spending) {
		p.add("thresholds.spending: %q is not one of %s; obrien-fleming (the default) keeps most of α for the last look, pocock spends it evenly",
			t.Spending, strings.Join(stats.Spendings, ", "))
	}
	if !slices.Contains(Orders, c.Order) {
		p.add("order: %q is not one of %s; random (the default) runs each round's sides in a seeded random order, abba alternates base-head and head-base, alternate always runs base first",
			c.Order, strings.Join(Orders, ", "))
	}
	if !(t.MinChangePct >= 0) {
		p.add("thresholds.min_change_pct: %v is negative; use a percentage such as 1.0", t.MinChangePct)
	}
	if t.MinHistory < 2 {
		p.add("thresholds.min_history: %d is less than 2; noise is measured between adjacent baseline runs, so use 2 or more (10 is the default)", t.MinHistory)
	}
	if len(c.PrimaryUnits) == 0 {
		p.add("primary_units: empty; name at least one unit, as [sec/op]")
	}
	for i, u := range c.PrimaryUnits {
		if u == "" {
			p.add("primary_units[%d]: empty unit", i)
		} else if _, tidy := benchunit.Tidy(1, u); tidy != u {
			p.add("primary_units[%d]: %q is stored as %q; write %q", i, u, tidy, tidy)
		} else if analysis.IsSimulatedUnit(u) {
			p.add("primary_units[%d]: %q is a simulated count, one callgrind run a side compared exactly: it explains a change, "+
				"it cannot decide one; remove it (the report shows it with callgrind: true)", i, u)
		} else if slices.Index(c.PrimaryUnits, u) < i {
			p.add("primary_units[%d]: %q is listed twice", i, u)
		}
	}
}

// checkProfileFlag notes what is wrong with flag, the value of a
// benchmark's profile key (cpuprofile, memprofile) named field: not a
// flag, or given in the command or arguments already.
func checkProfileFlag(p *problems, field, key, flag string, b *Benchmark) {
	if flag == "" {
		return
	}
	if !flagName.MatchString(flag) {
		p.add("%s: %q is not a flag; write the flag that takes the profile's file, as --%s "+
			"(perfbot appends it and a path to the arguments), or leave %s out", field, flag, key, key)
	}
	for _, a := range append(slices.Clone(b.Command), b.Args...) {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			p.add("%s: %q in command or args already gives %s; remove it: with %s set, perfbot appends %s and a file of its own",
				field, a, flag, key, flag)
		}
	}
}

// checkVars notes references to unknown ${PERFBOT_…} variables and to
// $PERFBOT_… without braces.
func checkVars(p *problems, field string, args []string) {
	for _, a := range args {
		for _, ref := range varRef.FindAllString(a, -1) {
			switch ref {
			case "${PERFBOT_SRC}", "${PERFBOT_OUT}":
			case "$PERFBOT_SRC", "$PERFBOT_OUT":
				p.add("%s: %q: no shell expands %s; write ${%s}", field, a, ref, ref[1:])
			default:
				p.add("%s: %q: perfbot knows ${PERFBOT_SRC} and ${PERFBOT_OUT}, not %s", field, a, ref)
			}
		}
	}
}

func benchField(i int, name, field string) string {
	if name == "" {
		return fmt.Sprintf("benchmarks[%d].%s", i, field)
	}
	return fmt.Sprintf("benchmarks[%d] (%s).%s", i, name, field)
}

func atLeast(p *problems, field string, v, min int) {
	if v < min {
		p.add("%s: %d is less than %d; set it to %d or more", field, v, min, min)
	}
}

func positive(p *problems, field string, d time.Duration) {
	if d <= 0 {
		p.add("%s: %v is not positive; write a Go duration such as \"90s\" or \"5m\"", field, d)
	}
}

func intOr(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

func wordOr(v *oneWord, def string) string {
	if v == nil {
		return def
	}
	return string(*v)
}

// A lineWord is a oneWord that keeps its line, for a value check that
// names it (thresholds.fail_on).
type lineWord struct {
	word oneWord
	line int
}

// UnmarshalYAML reads the word and its line.
func (w *lineWord) UnmarshalYAML(n *yaml.Node) error {
	w.line = n.Line
	return w.word.UnmarshalYAML(n)
}

// A oneWord is a key whose value is one of a few names (order,
// thresholds.spending): a scalar, whose value check names the choices.
type oneWord string

// UnmarshalYAML rejects a list or a map with the line it is on.
func (w *oneWord) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: %s where one name belongs; write order: random or spending: obrien-fleming, for example", n.Line, kindName(n))}}
	}
	*w = oneWord(strings.TrimSpace(n.Value))
	return nil
}

func floatOr(v *float64, def float64) float64 {
	if v == nil {
		return def
	}
	return *v
}

func durationOr(p *problems, field string, v *string, def time.Duration) time.Duration {
	if v == nil {
		return def
	}
	d, err := time.ParseDuration(*v)
	if err != nil {
		p.add("%s: %q is not a duration; write a Go duration such as \"90s\", \"5m\" or \"1h30m\"", field, *v)
		return def
	}
	return d
}

// normalize makes equal configurations equal in Go: empty slices and maps
// are nil.
func (c *Config) normalize() {
	if len(c.Build) == 0 {
		c.Build = nil
	}
	for i := range c.Build {
		st := &c.Build[i]
		if len(st.Env) == 0 {
			st.Env = nil
		}
		if len(st.Inputs) == 0 {
			st.Inputs = nil
		}
		if len(st.Outputs) == 0 {
			st.Outputs = nil
		}
	}
	if len(c.PrimaryUnits) == 0 {
		c.PrimaryUnits = nil
	}
	if len(c.Variant) == 0 {
		c.Variant = nil
	}
	for i := range c.Benchmarks {
		b := &c.Benchmarks[i]
		if len(b.Command) == 0 {
			b.Command = nil
		}
		if len(b.Args) == 0 {
			b.Args = nil
		}
		if len(b.Env) == 0 {
			b.Env = nil
		}
		if len(b.CPUs) == 0 {
			b.CPUs = nil
		}
	}
}

// Hash returns the hexadecimal SHA-256 of the configuration's canonical
// JSON: equal for configurations that mean the same (however the YAML
// was written, with defaults spelled out or not), different when any
// value differs, except a benchmark's Callgrind (the timed runs are the
// same with it or without it, so their history stays one series), the
// order of the sides, the spending function, α, max_count,
// build_parallel and build_verify.
func (c *Config) Hash() string {
	cp := c.normalizedCopy()
	for i := range cp.Benchmarks {
		cp.Benchmarks[i].Callgrind = false
	}
	// When runs happen (order) and how looks share α (spending) do not
	// change what a run measures.
	cp.Order, cp.Thresholds.Spending, cp.Thresholds.Paired = "", "", false
	// Nor does what the verdict is about, or what fails a check.
	cp.Thresholds.Headline, cp.Thresholds.FailOn = "", ""
	// Nor do how many revisions build at once and how often a reused
	// build step is checked.
	cp.BuildParallel, cp.BuildVerify = 0, 0
	// Nor do α and the cap on runs: they decide verdicts and how many runs
	// a comparison takes. They hash as the values they had when the hash
	// was defined (the defaults until 2026-12-02, α 0.05 and 30), so that
	// the change of defaults, or a maintainer tuning them, keeps history
	// one series and every cached build.
	cp.Thresholds.Alpha, cp.MaxCount = hashedAlpha, hashedMaxCount
	return hashJSON("perfbot config v1", cp)
}

// BuildHash returns the hexadecimal SHA-256 of the build commands alone:
// the build cache's key with the commit, so that changing a benchmark or
// a threshold does not rebuild.
func (c *Config) BuildHash() string {
	return hashJSON("perfbot build v1", c.normalizedCopy().Build)
}

func (c *Config) normalizedCopy() *Config {
	cp := *c
	cp.Build = slices.Clone(c.Build)
	cp.Benchmarks = slices.Clone(c.Benchmarks)
	cp.normalize()
	return &cp
}

func hashJSON(domain string, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("runner: hash %s: %v", domain, err)) // plain data always marshals
	}
	h := sha256.New()
	h.Write([]byte(domain + "\n"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// problems collects configuration problems.
type problems []string

func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

func (p problems) err() error {
	switch len(p) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%w: %s", ErrInvalidConfig, p[0])
	}
	return fmt.Errorf("%w:\n  - %s", ErrInvalidConfig, strings.Join(p, "\n  - "))
}

// unknownField matches yaml.v3's message for a key no field takes.
var unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)

// yamlProblems rewrites a YAML decoding error for people: an unknown key
// is named with its line, its section and the keys that section knows.
func yamlProblems(err error) problems {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return problems{strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var p problems
	for _, msg := range te.Errors {
		m := unknownField.FindStringSubmatch(msg)
		if m == nil {
			p = append(p, msg)
			continue
		}
		section, known := "at the top level", yamlKeys(rawConfig{})
		switch m[3] {
		case "runner.rawBenchmark":
			section, known = "in a benchmark", yamlKeys(rawBenchmark{})
		case "runner.rawThresholds":
			section, known = "in thresholds", yamlKeys(rawThresholds{})
		}
		hint := ""
		if near := nearest(m[2], known); near != "" {
			hint = fmt.Sprintf("did you mean %q? ", near)
		}
		p.add("line %s: unknown key %q %s; %sknown keys: %s", m[1], m[2], section, hint, strings.Join(known, ", "))
	}
	return p
}

// yamlKeys returns the YAML keys of a struct's fields, in order.
func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// nearest returns the key within edit distance 2 of s, or "".
func nearest(s string, keys []string) string {
	best, bestD := "", 3
	for _, k := range keys {
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
