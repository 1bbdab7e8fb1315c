package system

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// The statuses of a Finding.
const (
	// OK: the setting is what benchmarks want.
	OK = "ok"
	// Warn: a known source of noise is on (or, for perf counters, the
	// measurements perfbot explains changes with cannot be taken).
	Warn = "warn"
	// Info: worth knowing, often worth changing on a dedicated runner,
	// but not wrong as it is.
	Info = "info"
	// Unknown: the state could not be read; State says why.
	Unknown = "unknown"
)

// A Finding is the state of one source of noise.
type Finding struct {
	// Name identifies the source ("cpu-governor", "thp",
	// "persistence-mode"); names are stable.
	Name string `json:"name"`
	// State is what was read, in words, or why nothing could be.
	State string `json:"state"`
	// Status is OK, Warn, Info or Unknown.
	Status string `json:"status"`
	// Advice is the exact change that would remove the noise (a command
	// to run, a kernel parameter, a .perfbot.yml field); empty when there
	// is nothing to change.
	Advice string `json:"advice,omitempty"`
	// Source is the file or NVML call the state came from.
	Source string `json:"source,omitempty"`
}

// A Process is one process and the CPU it used over an interval.
type Process struct {
	PID int `json:"pid"`
	// Comm is its command name (/proc/PID/comm: at most 15 bytes).
	Comm string `json:"comm"`
	// CPUPct is the CPU time it used over the interval, in percent of
	// one CPU: 100 is one CPU busy throughout, 250 two and a half.
	CPUPct float64 `json:"cpu_pct"`
}

// A GPU is one device NVML reports and its findings.
type GPU struct {
	Index    int       `json:"index"` // NVML's index, the order nvidia-smi shows
	Name     string    `json:"name"`
	UUID     string    `json:"uuid,omitempty"`
	Findings []Finding `json:"findings"`
}

// A Report is what Inspect found.
type Report struct {
	Time     time.Time `json:"time"`
	Hostname string    `json:"hostname"`
	Kernel   string    `json:"kernel,omitempty"` // /proc/sys/kernel/osrelease
	// CPUs counts the online logical CPUs.
	CPUs int `json:"cpus"`
	// Interval is how long the processes' CPU use was sampled.
	Interval time.Duration `json:"interval_ns"`
	// Findings are the machine's findings, in a fixed order.
	Findings []Finding `json:"findings"`
	// Processes are the busiest other processes over Interval (at most
	// 5, the busiest first): every process but the excluded ones and
	// their descendants that used any CPU.
	Processes []Process `json:"processes"`
	// NVML says whether NVML answered: the driver and how many GPUs, or
	// (Unknown) why there is no GPU information.
	NVML Finding `json:"nvml"`
	// GPUs are the devices NVML reports, in its order.
	GPUs []GPU `json:"gpus"`
}

// Warnings returns the findings whose status is Warn: the machine's, then
// each GPU's, whose names are prefixed with "gpuN/" (N its index) so that
// devices stay apart.
func (r Report) Warnings() []Finding {
	var w []Finding
	for _, f := range append([]Finding{r.NVML}, r.Findings...) {
		if f.Status == Warn {
			w = append(w, f)
		}
	}
	for _, g := range r.GPUs {
		for _, f := range g.Findings {
			if f.Status == Warn {
				f.Name = fmt.Sprintf("gpu%d/%s", g.Index, f.Name)
				w = append(w, f)
			}
		}
	}
	return w
}

// WriteJSON writes r as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r for a terminal: a header, the findings in aligned
// columns (name, status, state) with each one's advice indented under its
// state after "->", the busiest other processes, the GPUs in their own
// section, and a line naming the warnings.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	host := r.Hostname
	if host == "" {
		host = "(unknown host)"
	}
	fmt.Fprintf(&b, "%s: %d CPUs", host, r.CPUs)
	if r.Kernel != "" {
		fmt.Fprintf(&b, ", Linux %s", r.Kernel)
	}
	fmt.Fprintf(&b, ", %s\n", r.Time.UTC().Format(time.RFC3339))
	b.WriteString("Nothing was changed: each -> line says what to change.\n\n")

	width := len("NAME")
	for _, f := range r.Findings {
		width = max(width, len(f.Name))
	}
	width = max(width, len(r.NVML.Name))
	for _, g := range r.GPUs {
		for _, f := range g.Findings {
			width = max(width, len(f.Name))
		}
	}
	row := func(name, status, state string) {
		fmt.Fprintf(&b, "%-*s  %-7s  %s\n", width, name, status, state)
	}
	finding := func(f Finding) {
		row(f.Name, f.Status, f.State)
		if f.Advice != "" {
			fmt.Fprintf(&b, "%*s-> %s\n", width+2+7+2, "", f.Advice)
		}
	}
	row("NAME", "STATUS", "STATE")
	for _, f := range r.Findings {
		finding(f)
	}

	fmt.Fprintf(&b, "\nBusiest other processes over %v (%% of one CPU):\n", r.Interval.Round(10*time.Millisecond))
	if len(r.Processes) == 0 {
		b.WriteString("  none used any CPU\n")
	} else {
		fmt.Fprintf(&b, "  %8s  %6s  %s\n", "PID", "CPU%", "COMMAND")
		for _, p := range r.Processes {
			fmt.Fprintf(&b, "  %8d  %6.1f  %s\n", p.PID, p.CPUPct, p.Comm)
		}
	}

	b.WriteString("\nGPUs (NVML):\n")
	finding(r.NVML)
	for _, g := range r.GPUs {
		fmt.Fprintf(&b, "\nGPU %d: %s", g.Index, g.Name)
		if g.UUID != "" {
			fmt.Fprintf(&b, " (%s)", g.UUID)
		}
		b.WriteString("\n")
		for _, f := range g.Findings {
			finding(f)
		}
	}

	warnings := r.Warnings()
	if len(warnings) == 0 {
		b.WriteString("\nNo warnings.\n")
	} else {
		names := make([]string, len(warnings))
		for i, f := range warnings {
			names[i] = f.Name
		}
		s := "s"
		if len(warnings) == 1 {
			s = ""
		}
		fmt.Fprintf(&b, "\n%d warning%s: %s.\n", len(warnings), s, strings.Join(names, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
