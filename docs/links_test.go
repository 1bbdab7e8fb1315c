// Package docs holds perfbot's documentation; its one test checks that
// every link in the README and the documents resolves.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown inline link or image: [text](target) or
// ![alt](target "title"); the target is the first group.
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// anchor is GitHub's id of a heading: lower case, spaces to dashes, every
// other character but letters, digits, '-' and '_' dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the ids of path's headings (outside code fences), with
// GitHub's -1, -2 … for repeated ones.
func anchors(t *testing.T, path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		id := anchor(strings.TrimLeft(line, "#"))
		if n := seen[id]; n > 0 {
			ids[id+"-"+string(rune('0'+n))] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

// TestEveryLinkResolves reads README.md, the other top-level Markdown
// files and every Markdown file under docs/, cuda/, bench/ and deploy/,
// and checks each relative link: the file or directory exists in the
// repository, and a #fragment into a Markdown file names one of its
// headings. Links to other sites are not fetched (CI has no network).
func TestEveryLinkResolves(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "*.md"))
	for _, dir := range []string{"docs", "cuda", "bench", "deploy"} {
		filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
				files = append(files, path)
			}
			return nil
		})
	}
	if len(files) < 5 {
		t.Fatalf("found %d Markdown files under %s; want the README and docs/", len(files), root)
	}
	links := 0
	headings := map[string]map[string]bool{} // a file's anchors, read once
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		fence := false
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
				continue
			}
			if fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if !strings.HasPrefix(dest, root+string(filepath.Separator)) && dest != root {
						t.Errorf("%s:%d: %s points outside the repository", rel, n+1, target)
						continue
					}
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: %s: no such file in the repository", rel, n+1, target)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if headings[dest] == nil {
					headings[dest] = anchors(t, dest)
				}
				if !headings[dest][frag] {
					t.Errorf("%s:%d: %s: %s has no heading with that anchor", rel, n+1, target, filepath.Base(dest))
				}
			}
		}
	}
	if links < 10 {
		t.Errorf("checked %d relative links; want the README's and the docs' (is the link pattern right?)", links)
	}
}
