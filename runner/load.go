package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/runner/system"
)

// The bounds past which a comparison warns of other work on the machine.
const (
	// maxOtherCPUs is how many CPUs other processes may keep busy on
	// average during the runs: a fifth of one (system.MaxOtherCPUPct).
	maxOtherCPUs = system.MaxOtherCPUPct / 100
	// maxStealPct is how much CPU time a hypervisor may give other
	// guests, in percent, before a comparison says so.
	maxStealPct = 5.0
	// loadInspectInterval is how long the comparison's perfbot system
	// samples the other processes before the runs.
	loadInspectInterval = 250 * time.Millisecond
)

// A loadMeter watches the machine while a comparison runs: perfbot
// system's findings before the runs, and the CPU other processes used
// during them.
type loadMeter struct {
	sys   system.Report
	usage *system.UsageMeter
	err   error
}

// startLoad inspects the machine (system.Inspect, which Runner.Inspect
// replaces when set) and starts measuring other processes' CPU.
func (r *Runner) startLoad(ctx context.Context) *loadMeter {
	inspect := r.Inspect
	if inspect == nil {
		inspect = func(ctx context.Context) system.Report {
			return system.Inspect(ctx, system.Options{Interval: loadInspectInterval, Exclude: []int{os.Getpid()}})
		}
	}
	m := &loadMeter{sys: inspect(ctx)}
	m.usage, m.err = system.StartUsage()
	return m
}

// close stops the usage meter's sampling, for a comparison that ends
// without stop.
func (m *loadMeter) close() {
	if m.usage != nil {
		m.usage.Close()
	}
}

// stop ends the watch. It returns the caveats for the report, the usage
// over the runs, and the inputs to store with the comparison: the system
// report and the usage.
func (m *loadMeter) stop() (caveats []string, inputs map[string]any) {
	inputs = map[string]any{"system": m.sys}
	caveats = staticCaveats(m.sys)
	if m.err != nil {
		return append(caveats, fmt.Sprintf("the CPU use of other processes during the runs was not measured: %v", m.err)), inputs
	}
	u := m.usage.Stop()
	inputs["load"] = u
	return append(caveats, loadCaveats(u)...), inputs
}

// loadCaveats are the warnings a comparison's usage calls for: other
// processes busy, CPU stolen by a hypervisor, swapping.
func loadCaveats(u system.Usage) []string {
	if u.Unavailable != "" {
		return []string{fmt.Sprintf("the CPU use of other processes during the runs was not measured: %s", u.Unavailable)}
	}
	var out []string
	if u.OtherCPUs > maxOtherCPUs {
		busiest := ""
		if top := busiestCommands(u); len(top) > 0 {
			busiest = " (busiest, in % of one CPU: " + strings.Join(top, ", ") + ")"
		}
		if u.UnattributedPct >= 10 && u.UnattributedPct >= u.OtherCPUs*100/5 {
			busiest += fmt.Sprintf(" (%.0f%% of one CPU not put down to any process)", u.UnattributedPct)
		}
		wall := u.Wall.Round(time.Second)
		if u.Wall < 10*time.Second {
			wall = u.Wall.Round(100 * time.Millisecond)
		}
		out = append(out, fmt.Sprintf("other processes kept %.2f CPUs busy on average during the %s of runs%s: a shared machine adds noise and makes small changes harder to see; perfbot system lists what runs",
			u.OtherCPUs, wall, busiest))
	}
	if u.StealPct > maxStealPct {
		out = append(out, fmt.Sprintf("the hypervisor gave %.1f%% of the CPU time to other guests during the runs (steal): the machine's speed varied with its neighbours", u.StealPct))
	}
	if u.SwapIns > 0 {
		out = append(out, fmt.Sprintf("%d pages were swapped in during the runs: memory pressure slows runs unevenly", u.SwapIns))
	}
	return out
}

// busiestCommands names the three commands that used the most CPU,
// those at 1% of one CPU or more: "cc1 ×50 120%" for fifty processes
// named cc1, "sh (pid 7) 100%" for one, "make's children 40%" for the
// children no sample saw. A Usage without Commands names its Top
// processes.
func busiestCommands(u system.Usage) []string {
	var top []string
	for _, c := range u.Commands {
		switch {
		case c.CPUPct < 1 || len(top) == 3:
		case c.Processes > 1:
			top = append(top, fmt.Sprintf("%s ×%d %.0f%%", c.Comm, c.Processes, c.CPUPct))
		case c.Processes == 1:
			top = append(top, fmt.Sprintf("%s (pid %d) %.0f%%", c.Comm, c.PID, c.CPUPct))
		default:
			top = append(top, fmt.Sprintf("%s %.0f%%", c.Comm, c.CPUPct))
		}
	}
	if u.Commands != nil {
		return top
	}
	for _, p := range u.Top {
		if p.CPUPct >= 1 && len(top) < 3 {
			top = append(top, fmt.Sprintf("%s (pid %d) %.0f%%", p.Comm, p.PID, p.CPUPct))
		}
	}
	return top
}

// dynamicFindings are perfbot system's findings about what ran in its
// short sample before the runs; the usage over the runs replaces them.
var dynamicFindings = []string{"load", "busy-processes"}

// staticCaveats turn perfbot system's warnings about the machine's
// settings (swap in use, transparent huge pages always, a GPU without
// persistence or below its clocks, another process on it) into one
// caveat.
func staticCaveats(r system.Report) []string {
	var parts []string
	for _, f := range r.Warnings() {
		if slices.Contains(dynamicFindings, f.Name) {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", f.Name, f.State))
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("perfbot system found known noise sources on this runner: %s; perfbot system says what to change",
		strings.Join(parts, "; "))}
}

// marshalInputs adds the load meter's inputs to a comparison's.
func marshalInputs(in map[string]any, extra map[string]any) ([]byte, error) {
	for k, v := range extra {
		in[k] = v
	}
	return json.Marshal(in)
}
