package system

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// An fsys reads the files of /proc and /sys below one root directory.
type fsys struct {
	root string
}

// path returns where the machine's absolute path p lies under the root.
func (f fsys) path(p string) string { return filepath.Join(f.root, p) }

// read returns the content of the machine's file p without surrounding
// white space. Its errors name p as the machine knows it, not the root
// below which it was read.
func (f fsys) read(p string) (string, error) {
	b, err := os.ReadFile(f.path(p))
	if err != nil {
		return "", readError(p, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// exists reports whether the machine's path p exists.
func (f fsys) exists(p string) bool {
	_, err := os.Stat(f.path(p))
	return err == nil
}

// readError is err, an error reading p, with p as the machine knows it.
func readError(p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fileError{path: p, err: err}
}

// A fileError says which file could not be read and why.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string { return fmt.Sprintf("cannot read %s: %v", e.path, e.err) }
func (e *fileError) Unwrap() error { return e.err }

// readInt reads a file that holds one integer.
func (f fsys) readInt(p string) (int, error) {
	s, err := f.read(p)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s holds %q, not a number", p, s)
	}
	return n, nil
}

// readKeyed reads a file of "key value [unit]" lines (/proc/meminfo,
// /proc/vmstat) and returns the values of the keys asked for; a key
// missing from the file is an error.
func (f fsys) readKeyed(p string, keys ...string) (map[string]uint64, error) {
	s, err := f.read(p)
	if err != nil {
		return nil, err
	}
	vals := map[string]uint64{}
	for line := range strings.Lines(s) {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		k := strings.TrimSuffix(fields[0], ":")
		if !slices.Contains(keys, k) {
			continue
		}
		v, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s is %q, not a number", p, k, fields[1])
		}
		vals[k] = v
	}
	for _, k := range keys {
		if _, ok := vals[k]; !ok {
			return nil, fmt.Errorf("%s has no %s line", p, k)
		}
	}
	return vals, nil
}

// parseCPUList parses a Linux CPU list ("0-3,8,10-11"; "" is none).
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	s = strings.TrimSpace(s)
	if s == "" || s == "(null)" {
		return nil, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// formatCPUList writes CPUs as a Linux CPU list: sorted, runs as ranges.
func formatCPUList(cpus []int) string {
	cpus = slices.Clone(cpus)
	slices.Sort(cpus)
	cpus = slices.Compact(cpus)
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", cpus[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		}
		i = j + 1
	}
	return b.String()
}
