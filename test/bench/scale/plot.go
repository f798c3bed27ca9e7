package scale

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot names, written by Plot into the results directory.
const (
	PlotMemory   = "memory.svg"
	PlotRequests = "requests.svg"
	PlotOps      = "operations.svg"
)

// series is one line of a plot: a name and its points.
type series struct {
	name string
	xys  plotter.XYs
}

// Plot draws r into dir: memory (RSS of the hub controller, kube-apiserver
// and etcd), idle API requests per second and the operations' times, each
// against the cluster count, with OCM's figures where there are any.
func Plot(r *Results, dir string) error {
	proc := func(name string) series {
		s := series{name: name}
		for _, st := range r.Steps {
			if p, ok := st.Processes[name]; ok {
				s.xys = append(s.xys, plotter.XY{X: float64(st.Clusters), Y: p.RSSMiB})
			}
		}
		return s
	}
	rate := func(name string, y func(Step) float64) series {
		s := series{name: name}
		for _, st := range r.Steps {
			s.xys = append(s.xys, plotter.XY{X: float64(st.Clusters), Y: y(st)})
		}
		return s
	}
	memory := []series{proc(ProcHubController), proc(ProcAPIServer), proc(ProcEtcd),
		rate("OCM hub controllers (161 MB, cluster count unpublished)", func(Step) float64 { return ocmHubRSSMiB })}
	requests := []series{
		rate("all requests", func(s Step) float64 { return s.IdleRequestsPerSecond }),
		rate("writes", func(s Step) float64 { return s.IdleWritesPerSecond }),
		rate("lease writes", func(s Step) float64 { return s.IdleLeaseWritesPerSecond }),
		rate("OCM lease writes (1 per 60 s lease)", func(s Step) float64 { return float64(s.Clusters) * ocmLeaseWritesPerClusterPerSecond }),
	}
	var ops []series
	for _, name := range allOps {
		s := series{name: name}
		for _, st := range r.Steps {
			if o, ok := st.Ops[name]; ok {
				s.xys = append(s.xys, plotter.XY{X: float64(st.Clusters), Y: o.Seconds})
			}
		}
		if len(s.xys) > 0 {
			ops = append(ops, s)
		}
	}
	for _, p := range []struct {
		file, title, y string
		lines          []series
		logY           bool
	}{
		{PlotMemory, "Resident memory, idle", "RSS (MiB)", memory, false},
		{PlotRequests, "Hub API requests, idle", "requests per second", requests, false},
		// The operations take from a tenth of a second to minutes.
		{PlotOps, "Operations over the whole fleet", "seconds (log scale)", ops, true},
	} {
		if err := draw(filepath.Join(dir, p.file), p.title, p.y, p.lines, p.logY); err != nil {
			return fmt.Errorf("plot %s: %w", p.file, err)
		}
	}
	return nil
}

// draw writes one line plot of lines to path (its extension picks the
// format), the cluster counts on a logarithmic axis, as the steps grow
// geometrically, the values on one too with logY, and headroom above the
// lines for the legend.
func draw(path, title, yLabel string, lines []series, logY bool) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "managed clusters (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	var args []any
	top, bottom := 0.0, math.Inf(1)
	for _, l := range lines {
		if len(l.xys) == 0 {
			continue
		}
		args = append(args, l.name, l.xys)
		for _, xy := range l.xys {
			top, bottom = max(top, xy.Y), min(bottom, xy.Y)
		}
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	legend := float64(len(args) / 2)
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min = max(1e-3, bottom/2)
		p.Y.Max = max(p.Y.Min*10, top) * math.Pow(2, legend/2)
	} else {
		p.Y.Min = 0
		p.Y.Max = max(1, top) * (1 + 0.09*legend)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}
