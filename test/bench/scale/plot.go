package scale

import (
	"fmt"
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
	}{
		{PlotMemory, "Resident memory, idle", "RSS (MiB)", memory},
		{PlotRequests, "Hub API requests, idle", "requests per second", requests},
		{PlotOps, "Operations over the whole fleet", "seconds", ops},
	} {
		if err := draw(filepath.Join(dir, p.file), p.title, p.y, p.lines); err != nil {
			return fmt.Errorf("plot %s: %w", p.file, err)
		}
	}
	return nil
}

// draw writes one line plot of lines to path (its extension picks the
// format).
func draw(path, title, yLabel string, lines []series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "managed clusters"
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	var args []any
	for _, l := range lines {
		if len(l.xys) > 0 {
			args = append(args, l.name, l.xys)
		}
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}
