package groth16

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// CachePath returns the file LoadOrSetup uses in dir for a circuit of the
// given shape: groth16-<first 16 hex digits of the shape>-<setup|random>.key.
func CachePath(dir string, shape ShapeDigest, random bool) string {
	kind := "setup"
	if random {
		kind = "random"
	}
	return filepath.Join(dir, fmt.Sprintf("groth16-%s-%s.key", shape.String()[:16], kind))
}

// LoadOrSetup returns keys for cs, a Setup-mode system: read from the cache
// in dir when a usable file is there (fromCache), otherwise made by Setup,
// or by RandomKeys when random is set, drawing from rng, and written to the
// cache atomically (temporary file, then rename).
//
// Problems that do not stop it come back as warnings: a cached file that was
// corrupt (wrapping ErrCorruptKey) or made for another circuit (wrapping
// ErrShapeMismatch) and so regenerated, or keys that could not be cached.
// err is set only when no keys could be had.
func LoadOrSetup(dir string, cs *r1cs.System, rng io.Reader, random bool) (pk *ProvingKey, vk *VerifyingKey, fromCache bool, warnings []error, err error) {
	if cs.Mode()&r1cs.Setup == 0 {
		return nil, nil, false, nil, errors.New("groth16 load or setup: need a Setup-mode r1cs system")
	}
	shape := Shape(cs)
	path := CachePath(dir, shape, random)

	pk, vk, err = readKeyFile(path, shape)
	switch {
	case err == nil && pk.Random == random:
		return pk, vk, true, nil, nil
	case err == nil:
		warnings = append(warnings, fmt.Errorf("key cache %s holds random=%v keys, want random=%v; regenerated", path, pk.Random, random))
	case errors.Is(err, fs.ErrNotExist):
	default:
		warnings = append(warnings, fmt.Errorf("key cache %s: %w; regenerated", path, err))
	}

	if random {
		pk, vk, err = RandomKeys(cs, rng)
	} else {
		pk, vk, err = Setup(cs, rng)
	}
	if err != nil {
		return nil, nil, false, warnings, err
	}
	if werr := writeKeyFile(path, pk, vk); werr != nil {
		warnings = append(warnings, fmt.Errorf("key cache %s not written: %w", path, werr))
	}
	return pk, vk, false, warnings, nil
}

func readKeyFile(path string, shape ShapeDigest) (*ProvingKey, *VerifyingKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return ReadKeys(bufio.NewReaderSize(f, 1<<20), shape)
}

// writeKeyFile writes the keys to a temporary file in path's directory,
// syncs it and renames it over path, so a reader sees the old file, the new
// one or none, never a partial one.
func writeKeyFile(path string, pk *ProvingKey, vk *VerifyingKey) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".groth16-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := WriteKeys(bw, pk, vk); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
