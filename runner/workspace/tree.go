package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A TreeEntry is one file of a commit's tree, as `git ls-tree -r` lists
// it: a regular or executable file, a symbolic link, or a submodule's
// commit.
type TreeEntry struct {
	// Path is slash-separated, relative to the repository's top.
	Path string
	// Mode is git's octal mode: "100644", "100755", "120000" (a
	// symbolic link) or "160000" (a submodule).
	Mode string
	// OID is the object name of the file's contents (a blob), or of the
	// submodule's commit.
	OID string
}

// Submodule reports whether the entry is a submodule's commit rather
// than a file.
func (e TreeEntry) Submodule() bool { return e.Mode == "160000" }

// Tree lists every file of commit sha's tree (`git ls-tree -r`), sorted
// by path as git sorts them.
func (w *Workspace) Tree(ctx context.Context, sha string) ([]TreeEntry, error) {
	if !isFullSHA(sha) {
		return nil, fmt.Errorf("list tree %q: want a full lowercase commit SHA (from Resolve)", sha)
	}
	out, err := w.git(ctx, w.dir, "ls-tree", "-r", "-z", "--full-tree", sha)
	if err != nil {
		return nil, fmt.Errorf("list tree of %s: %w", short(sha), err)
	}
	var entries []TreeEntry
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// "<mode> SP <type> SP <oid> TAB <path>"
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("list tree of %s: unexpected git ls-tree line %q", short(sha), rec)
		}
		entries = append(entries, TreeEntry{Path: string(name), Mode: fields[0], OID: fields[2]})
	}
	return entries, nil
}

// WriteFiles writes the files of entries (from Tree) under dir, each at
// its Path, with git's mode (executable or not) or as a symbolic link;
// directories are made as needed. It reads their contents from the
// repository with one `git cat-file --batch`. A submodule cannot be
// written (its files are in another repository): it is an error.
func (w *Workspace) WriteFiles(ctx context.Context, entries []TreeEntry, dir string) error {
	for _, e := range entries {
		if e.Submodule() {
			return fmt.Errorf("write %s: a submodule; its files are not in this repository", e.Path)
		}
		if clean := path.Clean(e.Path); clean != e.Path || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("write %q: not a path inside the repository", e.Path)
		}
	}
	if len(entries) == 0 {
		return nil
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := make([]string, 0, 2*len(gitConfig)+2)
	for _, c := range gitConfig {
		full = append(full, "-c", c)
	}
	cmd := exec.CommandContext(cctx, "git", append(full, "cat-file", "--batch")...)
	cmd.Dir = w.dir
	cmd.Env = gitEnv(w.home)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("write files: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("write files: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("write files: git cat-file: %w", err)
	}
	werr := writeBatch(bufio.NewWriter(stdin), bufio.NewReaderSize(stdout, 64<<10), entries, dir)
	stdin.Close()
	if werr != nil {
		cancel()
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	switch {
	case werr != nil:
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			werr = fmt.Errorf("%w (git cat-file: %s)", werr, msg)
		}
		return fmt.Errorf("write files: %w", werr)
	case err != nil:
		return fmt.Errorf("write files: git cat-file --batch: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// writeBatch asks cat-file for each entry's object in turn and writes it.
// cat-file flushes each answer, so one question at a time cannot block.
func writeBatch(in *bufio.Writer, out *bufio.Reader, entries []TreeEntry, dir string) error {
	for _, e := range entries {
		if _, err := in.WriteString(e.OID + "\n"); err != nil {
			return err
		}
		if err := in.Flush(); err != nil {
			return err
		}
		header, err := out.ReadString('\n')
		if err != nil {
			return fmt.Errorf("%s: read %s: %w", e.Path, e.OID, err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			return fmt.Errorf("%s: object %s: git cat-file says %q", e.Path, e.OID, strings.TrimSpace(header))
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("%s: object %s: size %q", e.Path, e.OID, f[2])
		}
		if err := writeEntry(e, io.LimitReader(out, size), size, filepath.Join(dir, filepath.FromSlash(e.Path))); err != nil {
			return err
		}
		if b, err := out.ReadByte(); err != nil || b != '\n' {
			return fmt.Errorf("%s: object %s: no newline after its contents", e.Path, e.OID)
		}
	}
	return nil
}

// writeEntry writes one file's contents, size bytes from r, at name.
func writeEntry(e TreeEntry, r io.Reader, size int64, name string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	if e.Mode == "120000" {
		target, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Path, err)
		}
		return os.Symlink(string(target), name)
	}
	perm := os.FileMode(0o644)
	if e.Mode == "100755" {
		perm = 0o755
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != size {
		err = errors.New("short read")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", e.Path, err)
	}
	return nil
}
