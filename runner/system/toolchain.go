package system

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A tool is a program the shipped GPU config's build steps run
// (deploy/perfbot-gpu.example.yml): go builds perfbot, make and nvcc the
// CUDA library.
type tool struct {
	name, finding string
	args          []string // what prints its version
	// also are paths tried when the name is not on PATH (CUDA installs
	// nvcc outside it).
	also   []string
	advice string
}

var buildTools = []tool{
	{name: "go", finding: "toolchain-go", args: []string{"version"},
		advice: "install Go (https://go.dev/dl/, go.mod's version or newer) and put it on the worker's PATH: the GPU config's first build step is go build"},
	{name: "make", finding: "toolchain-make", args: []string{"--version"},
		advice: "install make (apt-get install make): the GPU config builds the CUDA library with make cuda-lib"},
	{name: "nvcc", finding: "toolchain-nvcc", args: []string{"--version"}, also: []string{"/usr/local/cuda/bin/nvcc"},
		advice: "install the CUDA toolkit (nvcc) and put it on PATH, or set NVCC=/path/to/nvcc in the build step's env: the GPU config compiles cuda/ with it"},
}

// toolchain reports, for each program the GPU config's build steps need,
// where it is and its version (the last non-empty line nvcc prints, the
// first of the others), or that it is missing, with what to install.
// Missing is info, not a warning: a CPU-only runner needs none of them.
func toolchain(ctx context.Context, root string, lookPath func(string) (string, error)) []Finding {
	var out []Finding
	for _, t := range buildTools {
		f := Finding{Name: t.finding, Source: "PATH"}
		path, err := lookPath(t.name)
		for _, p := range t.also {
			if err == nil {
				break
			}
			p = filepath.Join(root, p)
			if st, serr := os.Stat(p); serr == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				path, err, f.Source = p, nil, p
			}
		}
		if err != nil {
			f.Status, f.State, f.Advice = Info, t.name+" not found on PATH", t.advice
			out = append(out, f)
			continue
		}
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		b, verr := exec.CommandContext(vctx, path, t.args...).CombinedOutput()
		cancel()
		if verr != nil {
			f.Status, f.State, f.Advice = Warn, path+" does not run: "+strings.TrimSpace(firstLine(string(b))+" "+verr.Error()), t.advice
			out = append(out, f)
			continue
		}
		version := firstLine(string(b))
		if t.name == "nvcc" {
			version = lastLine(string(b))
		}
		f.Status, f.State = OK, version+" ("+filepath.Clean(path)+")"
		out = append(out, f)
	}
	return out
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
