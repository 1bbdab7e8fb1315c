package readers

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// plainNumber matches a name part that is a plain number: an argument
// without a name, as Google Benchmark prints "BM_Sort/1024".
var plainNumber = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$`)

// nameParts builds a benchmark name from parts: the first is the base
// name, the rest are its sub-benchmark parts. Every part is tidied by
// tidyPart; empty parts are dropped; a later part that is a plain number
// becomes argN=value, N counting such parts from 0; with colons, a part
// "key:value" (Google Benchmark's named arguments) becomes key=value. A
// key "phase" becomes "phase_", so that no reader makes a phase out of
// what its format calls an argument (analysis.SplitName reads "/phase=").
func nameParts(parts []string, colons bool) string {
	var out []string
	arg := 0
	for _, p := range parts {
		p = tidyPart(p)
		if p == "" {
			continue
		}
		if len(out) > 0 && !strings.Contains(p, "=") {
			if k, v, ok := strings.Cut(p, ":"); colons && ok && k != "" && v != "" {
				p = k + "=" + v
			} else if plainNumber.MatchString(p) {
				p = "arg" + strconv.Itoa(arg) + "=" + p
				arg++
			}
		}
		if k, v, ok := strings.Cut(p, "="); ok && k == "phase" {
			p = "phase_=" + v
		}
		out = append(out, p)
	}
	return goSafe(strings.Join(out, "/"))
}

// splitName is nameParts of name split at "/".
func splitName(name string, colons bool) string {
	return nameParts(strings.Split(name, "/"), colons)
}

// kv returns the name part key=value, with both tidied and any "/" in
// them made '_' so that the part stays one part.
func kv(key, value string) string {
	return tidyPart(strings.ReplaceAll(key, "/", "_")) + "=" + tidyPart(strings.ReplaceAll(value, "/", "_"))
}

// tidyPart trims a name part and turns each space or control character
// left in it into '_' and invalid UTF-8 into U+FFFD.
func tidyPart(p string) string {
	p = strings.TrimSpace(strings.ToValidUTF8(p, "\uFFFD"))
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, p)
}

// goSafe makes a name that ends in "-DIGITS" end in "_DIGITS" instead, so
// that analysis.SplitName and benchfmt do not take the digits for Go's
// -GOMAXPROCS suffix and drop them.
func goSafe(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 || strings.Contains(name[i:], "/") {
		return name
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:i] + "_" + name[i+1:]
}

// phaseName tidies a phase named by a program's output: its parts as a
// name's, but with no argN= or phase_ rewriting (a phase is free to read
// "msm_h/step=sort").
func phaseName(p string) string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, q := range parts {
		if q = tidyPart(q); q != "" {
			out = append(out, q)
		}
	}
	return goSafe(strings.Join(out, "/"))
}
