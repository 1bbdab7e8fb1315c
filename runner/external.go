package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfbot/perfbot/runner/workspace"
)

// ErrNoConfig is the error for a repository that says nowhere how to
// measure it: no config from outside, no .perfbot.yml at the base
// revision, and not perfbot itself, which the built-in default measures.
var ErrNoConfig = errors.New("no perfbot config")

// ownModule is the first line of perfbot's own go.mod: the repository the
// built-in default config measures.
const ownModule = "module github.com/perfbot/perfbot"

// An ExternalConfig is a measurement config given from outside the
// repository: perfbot's --config FILE, or a repository's config: in the
// server config. It takes precedence over .perfbot.yml at the base (good)
// revision, so that two existing commits can be compared, and a slowdown
// bisected, where neither has the file; the head revision's file is never
// read. Its hash is part of every run's identity like any config's.
type ExternalConfig struct {
	// Source names where it came from, for logs and reports:
	// "ci/prover.yml (--config)".
	Source string
	// Path is the file's absolute path when it was read from one
	// (ReadConfigFile), for the commands a report prints to pass it
	// again; "" for a config given inline.
	Path string
	data []byte
}

// NewExternalConfig parses data, the YAML of a config given from outside
// the repository, and returns it with source; an invalid config is an
// error wrapping ErrInvalidConfig that names source and the line.
func NewExternalConfig(data []byte, source string) (*ExternalConfig, error) {
	if _, err := ParseConfig(data); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return &ExternalConfig{Source: source, data: bytes.Clone(data)}, nil
}

// ReadConfigFile reads and parses the config file at path, given by how
// ("--config"): a file that is missing or does not parse is an error
// wrapping ErrInvalidConfig that names the file (and the line).
func ReadConfigFile(path, how string) (*ExternalConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrInvalidConfig, how, path, unwrapPath(err))
	}
	e, err := NewExternalConfig(data, fmt.Sprintf("%s (%s)", path, how))
	if err != nil {
		return nil, err
	}
	if e.Path, err = filepath.Abs(path); err != nil {
		e.Path = path
	}
	return e, nil
}

// configPath is the path of the runner's external config file, for
// printed commands to pass as --config; "" when it has none or it was not
// read from a file.
func (r *Runner) configPath() string {
	if r.Config == nil {
		return ""
	}
	return r.Config.Path
}

// unwrapPath drops the path an os error repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// config returns a fresh copy of the external config.
func (e *ExternalConfig) config() (*Config, error) {
	return ParseConfig(e.data)
}

// loadConfig returns the config that measures revision sha, by
// precedence: the Runner's external config, then .perfbot.yml at sha,
// then the built-in default, which only perfbot itself gets (ErrNoConfig
// for any other repository, before anything is built). source says
// which, for logs and the report.
func (r *Runner) loadConfig(ctx context.Context, ws *workspace.Workspace, sha string) (*Config, string, error) {
	if r.Config != nil {
		cfg, err := r.Config.config()
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", r.Config.Source, err)
		}
		return cfg, r.Config.Source, nil
	}
	return LoadConfig(ctx, ws, sha)
}

// isPerfbot reports whether revision sha of ws is perfbot itself: its
// go.mod names perfbot's module.
func isPerfbot(ctx context.Context, ws *workspace.Workspace, sha string) bool {
	data, err := ws.ReadFile(ctx, sha, "go.mod")
	if err != nil {
		return false
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	return string(bytes.TrimSpace(first)) == ownModule
}

// noConfigError says what to write when a repository has no config.
func noConfigError(ws *workspace.Workspace, at string) error {
	return fmt.Errorf("%w: %s has no %s at %s, and the built-in default measures perfbot's own prover only; "+
		"say how to measure this repository: pass --config FILE (a .perfbot.yml kept outside the repository; "+
		"runner/testdata/perfbot.example.yml documents every field), or commit a %s to the base revision",
		ErrNoConfig, ws.Source(), ConfigFile, at, ConfigFile)
}
