package chart

import (
	"bytes"
	"fmt"
	"html"
	"image/color"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// fontFamily is the font-family an SVG's texts name: vgsvg writes only
// the face's own family, "Liberation Sans", which a browser without it
// replaces with its default, usually a serif. Arial has the same
// metrics, so text still fits the room measured for it.
const fontFamily = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// tooltipMark opens the group vgsvg writes for Canvas.Scale(1, 1), which
// nothing in gonum/plot calls: fillWithTooltip wraps each bar segment in
// one so that fixSVG can find it. vgimg ignores it.
const tooltipMark = "<g transform=\"scale(1,1)\">\n"

// fillWithTooltip fills r on c in col as one SVG path that fixSVG gives
// a tooltip.
func fillWithTooltip(c draw.Canvas, r vg.Rectangle, col color.Color) {
	c.Push()
	c.Scale(1, 1)
	c.SetColor(col)
	c.Fill(r.Path())
	c.Pop()
}

// fixSVG edits the SVG that vgsvg wrote: every text names fontFamily,
// and the paths that fillWithTooltip drew get, in order, the tooltips:
// <path …><title>tooltip</title></path>, which browsers show on hover.
// vgsvg has no way to add an element's children, so this is done on the
// text it writes, whose form (one element a line) is fixed by its tests.
func fixSVG(svg []byte, tooltips []string) ([]byte, error) {
	svg = bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte(fontFamily))
	var b bytes.Buffer
	b.Grow(len(svg) + 64*len(tooltips))
	n := 0
	for {
		i := bytes.Index(svg, []byte(tooltipMark))
		if i < 0 {
			break
		}
		b.Write(svg[:i])
		svg = svg[i+len(tooltipMark):]
		if n >= len(tooltips) {
			return nil, fmt.Errorf("chart: more bar segments than the %d tooltips", len(tooltips))
		}
		tip := html.EscapeString(tooltips[n])
		n++
		if rest, ok := bytes.CutPrefix(svg, []byte("</g>\n")); ok { // nothing drawn
			svg = rest
			continue
		}
		path, rest, ok := bytes.Cut(svg, []byte("\n</g>\n"))
		switch {
		case !ok:
			return nil, fmt.Errorf("chart: bar segment %d is not closed", n)
		case bytes.HasPrefix(path, []byte("<path ")) && bytes.HasSuffix(path, []byte("/>")) && !bytes.Contains(path, []byte("\n")):
			b.Write(path[:len(path)-2])
			fmt.Fprintf(&b, "><title>%s</title></path>\n", tip)
		default:
			return nil, fmt.Errorf("chart: bar segment %d is not one path: %.80q", n, path)
		}
		svg = rest
	}
	if n != len(tooltips) {
		return nil, fmt.Errorf("chart: %d bar segments for %d tooltips", n, len(tooltips))
	}
	b.Write(svg)
	return b.Bytes(), nil
}
