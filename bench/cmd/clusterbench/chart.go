package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chartName is the announce chart's file, beside the results page.
const chartName = "cluster-announce.png"

// chartPath is where the chart goes: beside the results page.
func chartPath(o *options) string { return filepath.Join(filepath.Dir(o.out), chartName) }

// scriptBefore is what one announce cost before this design: the Lua
// script that appended the change to every session's log, while Redis
// served nothing else (measured on this machine with 1k, 10k and 100k
// sessions, the middle of each range).
var scriptBefore = plotter.XYs{{X: 1_000, Y: 10.8}, {X: 10_000, Y: 139}, {X: 100_000, Y: 1220}}

// writeChart draws the cost of a list change against the number of
// sessions, both axes logarithmic: the time to the last open stream told,
// Redis's longest wait for another client, the model's projection, and
// the script of the design before this one.
func writeChart(r *runResult, path string) error {
	p := plot.New()
	p.Title.Text = "A list change against the number of sessions"
	p.X.Label.Text = "sessions"
	p.Y.Label.Text = "milliseconds"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks{{Value: 1e3, Label: "1k"}, {Value: 1e4, Label: "10k"}, {Value: 1e5, Label: "100k"}, {Value: 1e6, Label: "1M"}}
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 1, Label: "1 ms"}, {Value: 5, Label: "5 ms"}, {Value: 10, Label: "10 ms"},
		{Value: 100, Label: "100 ms"}, {Value: 1000, Label: "1 s"}, {Value: 10000, Label: "10 s"}}
	p.X.Min, p.X.Max = 800, 1.25e6
	// Room above the lines for the legend.
	p.Y.Min, p.Y.Max = 0.5, 1e6
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	ms := func(d time.Duration) float64 { return max(float64(d)/1e6, 0.05) }
	var last, ping, call, seen plotter.XYs
	for _, s := range r.Scale {
		if len(s.Rounds) == 0 {
			continue
		}
		last = append(last, plotter.XY{X: float64(s.Sessions), Y: ms(medianOf(s.Rounds, func(a announceRound) time.Duration { return a.Last }))})
		worst, slowest := time.Duration(0), time.Duration(0)
		for _, a := range s.Rounds {
			worst, slowest = max(worst, a.WorstPing), max(slowest, a.Slowest)
		}
		ping = append(ping, plotter.XY{X: float64(s.Sessions), Y: ms(worst)})
		call = append(call, plotter.XY{X: float64(s.Sessions), Y: ms(logBatch * s.ScriptMean)})
		seen = append(seen, plotter.XY{X: float64(s.Sessions), Y: ms(slowest)})
	}
	var model plotter.XYs
	if r.Sim != nil {
		for _, row := range r.Sim.Rows {
			if row.Measured == nil && row.Streams == 1 {
				model = append(model, plotter.XY{X: float64(row.Sessions), Y: ms(row.Latency)})
			}
		}
	}
	add := func(name string, xys plotter.XYs, c color.Color, dashed bool) error {
		if len(xys) == 0 {
			return nil
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color, pts.Color = c, c
		l.Width = vg.Points(1.5)
		pts.Shape = draw.CircleGlyph{}
		if dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l, pts)
		p.Legend.Add(name, l, pts)
		return nil
	}
	streams := 0
	if len(r.Scale) > 0 {
		streams = r.Scale[0].Streams
	}
	for _, s := range []struct {
		name   string
		xys    plotter.XYs
		c      color.Color
		dashed bool
	}{
		{fmt.Sprintf("the last of %d open GET streams told (median)", streams), last, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, false},
		{"the longest store call: a log batch, by Redis's clock", call, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, false},
		{"the longest single command seen (the scheduler's included)", seen, color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, true},
		{"a concurrent PING's worst wait (the scheduler's included)", ping, color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, true},
		{"the model: every session with a stream, 20–50 replicas", model, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, true},
		{"before: the announce script alone (Redis blocked)", scriptBefore, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, true},
	} {
		if err := add(s.name, s.xys, s.c, s.dashed); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
	}
	img := vgimg.New(9*vg.Inch, 6*vg.Inch)
	p.Draw(draw.New(img))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("chart: %w", err)
	}
	return f.Close()
}
