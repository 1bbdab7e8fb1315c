package execute

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// inheritedEnv names the only variables a benchmark inherits from
// perfbot's own environment; everything else must be given in Spec.Env.
var inheritedEnv = [...]string{"PATH", "HOME", "TMPDIR", "LANG", EnvVisibleDevices, EnvDeviceOrder}

// childEnv returns the benchmark's environment: the inherited variables
// that perfbot has, then given, whose entries win over them (os/exec keeps
// the last value of a repeated key), then OwnerMarker, which nothing
// given overrides. It is never nil: a nil Env would give the child
// perfbot's whole environment.
func childEnv(given []string) ([]string, error) {
	env := make([]string, 0, len(inheritedEnv)+len(given))
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, kv := range given {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("environment entry %q is not KEY=VALUE", kv)
		}
		env = append(env, kv)
	}
	if m := OwnerMarker(); m != "" {
		env = append(env, m)
	}
	return env, nil
}

// envValue returns the last value of key in env.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(env[i], "="); k == key {
			return v
		}
	}
	return ""
}

// lookPath finds the program file names. A name with a slash is used as
// it is (relative to the working directory, as os/exec does); any other
// name is searched in the PATH the benchmark gets, not in perfbot's.
// Relative PATH entries are skipped, like os/exec's ErrDot rule.
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	path := envValue(env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w (PATH=%s)", file, exec.ErrNotFound, path)
}
