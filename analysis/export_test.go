package analysis

// Private constants that the external tests (package analysis_test, the
// tests that render) name in the sentences they expect.
const (
	MinFuncSamples = minFuncSamples
	ProfileAlpha   = profileAlpha
)
