// Package stats computes numbers from samples and nothing else: the
// Hodges–Lehmann shift and its rank-test intervals (Mann-Whitney U, the
// Wilcoxon signed rank), exact tests of counts (Fisher's, the conditional
// binomial), Holm's correction, medians and quartiles, and the sequential
// design's α-spending boundaries. It knows nothing of a report: it must not
// import analysis (which builds the Report from these) nor analysis/render.
package stats
