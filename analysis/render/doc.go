// Package render formats what package analysis computed: a Report as the
// PR comment (RenderMarkdown), a terminal's text (RenderText) or JSON, its
// View for the dashboard, a BisectReport and a Trend. It only formats: it
// decides no verdict and writes no sentence that analysis's explanations
// and warnings need. It imports analysis; analysis must never import it.
package render
