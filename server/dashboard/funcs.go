package dashboard

import (
	"html/template"

	"github.com/perfbot/perfbot/store/queue"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"short":  short,
	"mul100": func(x float64) float64 { return x * 100 },
	// scale formats a phases page value in the page's scale.
	"scale": func(d *PhasesData, v float64) string { return number(v / d.factor) },
	"jobs": func(title, id string, jobs []queue.Job) map[string]any {
		return map[string]any{"Title": title, "ID": id, "Jobs": jobs}
	},
}
