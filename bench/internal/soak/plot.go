package soak

import (
	"fmt"
	"image/color"
	"os"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// procColors are the lines' colours, one per process.
var procColors = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// Plot draws heap, RSS, goroutines and open file descriptors of every
// process over the run, four charts one above the other, with the replica
// kill and the Redis restart marked, into a PNG at path.
func (r *Result) Plot(path string) error {
	procs := r.procNames()
	metrics := []struct {
		title string
		unit  string
		value func(sample) float64
	}{
		{"Go heap (HeapAlloc)", "MiB", func(s sample) float64 { return float64(s.Heap) / (1 << 20) }},
		{"Resident memory (RSS)", "MiB", func(s sample) float64 { return float64(s.RSS) / (1 << 20) }},
		{"Goroutines", "count", func(s sample) float64 { return float64(s.Goroutines) }},
		{"Open file descriptors", "count", func(s sample) float64 { return float64(s.FDs) }},
	}
	plots := make([][]*plot.Plot, len(metrics))
	for i, m := range metrics {
		p := plot.New()
		p.Title.Text = m.title
		p.X.Label.Text = "seconds since start"
		p.Y.Label.Text = m.unit
		p.Legend.Top = true
		p.Legend.Left = true
		p.Add(plotter.NewGrid())
		top := 0.0
		for j, name := range procs {
			var xys plotter.XYs
			for _, s := range r.Samples {
				if s.Proc == name {
					v := m.value(s)
					xys = append(xys, plotter.XY{X: s.At.Seconds(), Y: v})
					top = max(top, v)
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return fmt.Errorf("soak: plot: %w", err)
			}
			l.Color = procColors[j%len(procColors)]
			l.Width = vg.Points(1.2)
			p.Add(l)
			p.Legend.Add(name, l)
		}
		p.Y.Min = 0
		p.Y.Max = top * 1.15
		for _, w := range r.Windows {
			mk, err := plotter.NewLine(plotter.XYs{{X: w.From.Seconds(), Y: 0}, {X: w.From.Seconds(), Y: top * 1.15}})
			if err != nil {
				return fmt.Errorf("soak: plot: %w", err)
			}
			mk.Color = color.Gray{Y: 0x60}
			mk.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(mk)
		}
		for _, at := range []float64{r.LoadEnd.Seconds(), r.FinalAt.Seconds()} {
			mk, err := plotter.NewLine(plotter.XYs{{X: at, Y: 0}, {X: at, Y: top * 1.15}})
			if err != nil {
				return fmt.Errorf("soak: plot: %w", err)
			}
			mk.Color = color.Gray{Y: 0xa0}
			mk.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
			p.Add(mk)
		}
		plots[i] = []*plot.Plot{p}
	}
	const width, height = 10 * vg.Inch, 13 * vg.Inch
	img := vgimg.New(width, height)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(metrics), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("soak: plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("soak: plot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("soak: plot: %w", err)
	}
	return nil
}

// procNames are the sampled processes in a stable order.
func (r *Result) procNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range r.Samples {
		if !seen[s.Proc] {
			seen[s.Proc] = true
			out = append(out, s.Proc)
		}
	}
	sort.Strings(out)
	return out
}
