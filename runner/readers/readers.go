package readers

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/analysis"
)

// An Output is what one run of a benchmark program left: its standard
// output and standard error, and the directory it ran in, for formats
// that write files.
type Output struct {
	Stdout, Stderr []byte
	// Dir is the directory the program ran in; a Config's Path is
	// relative to it.
	Dir string
	// Start is when the run started. A file a reader reads that was last
	// written before Start is left over from an earlier run, and the
	// reader ignores it (criterion) or fails (gbench, hyperfine); a
	// runner that reuses a directory should still remove such files
	// before each run, as a run less than 100 ms after the last passes
	// the check. The zero Time checks nothing.
	Start time.Time
}

// A Reader turns one run's Output into samples. It returns an error that
// says what it expected when the output holds no sample it can read.
type Reader interface {
	Read(o Output) ([]analysis.Sample, error)
}

// Formats lists the formats New knows, the values of Config.Format.
var Formats = []string{"gbench", "criterion", "libtest", "hyperfine", "lines"}

// Streams lists the values of Config.Stream.
var Streams = []string{"stdout", "stderr"}

// A Config selects and configures a reader.
type Config struct {
	// Format is one of Formats.
	Format string
	// Pattern, Stream, Unit and Name are for "lines" only. Pattern is a
	// regular expression (Go's syntax) with a named group "value" and
	// optional groups "benchmark", "phase" and "unit"; Stream is the
	// stream it reads, one of Streams (default "stdout"); Unit is the
	// unit of values whose match has no unit group; Name is the
	// benchmark of values whose match has no benchmark group (default
	// "lines").
	Pattern, Stream, Unit, Name string
	// Path is a file or directory the program writes, relative to
	// Output.Dir: criterion's output directory (default
	// "target/criterion"), gbench's --benchmark_out file (default: none,
	// gbench reads stdout) or hyperfine's --export-json file (required).
	Path string
}

// DefaultCriterionPath is the directory criterion writes under when it
// runs in a crate's root.
const DefaultCriterionPath = "target/criterion"

// DefaultLinesName is the benchmark of "lines" values whose match has no
// benchmark group, when Config.Name is empty.
const DefaultLinesName = "lines"

// New returns the Reader that c selects. A config that names an unknown
// format, sets a field its format does not use or gives a field a value
// that cannot work is an error that names the field, the value and what
// is allowed.
func New(c Config) (Reader, error) {
	if !slices.Contains(Formats, c.Format) {
		return nil, fmt.Errorf("readers: format %q is not one of %s", c.Format, strings.Join(Formats, ", "))
	}
	if c.Format != "lines" {
		for _, f := range []struct{ name, value string }{{"pattern", c.Pattern}, {"stream", c.Stream}, {"unit", c.Unit}, {"name", c.Name}} {
			if f.value != "" {
				return nil, fmt.Errorf("readers: %s %q is set, but only format lines uses %s (format is %s)", f.name, f.value, f.name, c.Format)
			}
		}
	}
	if c.Path != "" {
		if c.Format == "libtest" || c.Format == "lines" {
			return nil, fmt.Errorf("readers: path %q is set, but format %s reads no file (path is for gbench, criterion and hyperfine)", c.Path, c.Format)
		}
		if !filepath.IsLocal(c.Path) {
			return nil, fmt.Errorf("readers: path %q must be relative to the directory the program runs in, without \"..\"", c.Path)
		}
	}
	switch c.Format {
	case "gbench":
		return gbench{path: c.Path}, nil
	case "criterion":
		p := c.Path
		if p == "" {
			p = DefaultCriterionPath
		}
		return criterion{path: p}, nil
	case "libtest":
		return libtest{}, nil
	case "hyperfine":
		if c.Path == "" {
			return nil, errors.New("readers: format hyperfine needs path: the file given to hyperfine's --export-json, relative to the directory it runs in")
		}
		return hyperfine{path: c.Path}, nil
	default: // "lines"
		return newLines(c)
	}
}

// readFile reads the file at path under o.Dir, for a format's reader:
// what says which file it is in errors.
func readFile(o Output, path, what string) ([]byte, error) {
	name := filepath.Join(o.Dir, path)
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("stat %s %s: %w", what, path, err)
	} else if stale(fi, o.Start) {
		return nil, fmt.Errorf("%s %s was last written at %s, before the run started at %s: the program did not write it this time", what, path,
			fi.ModTime().Format(time.RFC3339Nano), o.Start.Format(time.RFC3339Nano))
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return b, nil
}

// staleSlack allows for the file system's clock: Linux stamps files from
// a coarse clock that may lag time.Now by a tick (up to 10 ms).
const staleSlack = 100 * time.Millisecond

// stale reports whether a file last written as fi says was written
// before start, by an earlier run.
func stale(fi os.FileInfo, start time.Time) bool {
	return !start.IsZero() && fi.ModTime().Before(start.Add(-staleSlack))
}
