// Package fmtx formats numbers, units, revisions and lists of words the same
// way for analysis's explanations and warnings and for every rendering of
// analysis/render. It knows no report type: it must not import analysis nor
// analysis/render (only analysis/stats, for what is finite).
package fmtx
