package processor

import "maps"

// Stats are the processor's counters and gauges. It is a plain value so that
// the CLI can export it to Prometheus (or anything else) without this package
// depending on a metrics library. Counters only grow for the processor's life.
type Stats struct {
	// Events counts incremental events by object kind (KindService, ...).
	Events map[string]uint64
	// Resyncs counts calls of Processor.Resync.
	Resyncs uint64
	// InvalidSkipped counts invalid elements skipped, by kind and field. An
	// element is counted when it appears, not on every recomputation.
	InvalidSkipped map[ProblemKey]uint64
	// RendererFailures counts failed renderer calls by renderer name.
	RendererFailures map[string]uint64
	// RendererResyncs counts full resyncs sent to each renderer: the first,
	// one per Processor.Resync, one per late registration and every retry.
	RendererResyncs map[string]uint64

	// Services is the number of services currently rendered.
	Services int
	// DirtyRenderers is the number of renderers waiting for a retried resync.
	DirtyRenderers int
}

func newStats() Stats {
	return Stats{
		Events:           map[string]uint64{},
		InvalidSkipped:   map[ProblemKey]uint64{},
		RendererFailures: map[string]uint64{},
		RendererResyncs:  map[string]uint64{},
	}
}

// clone returns a copy that shares no map with the receiver.
func (s Stats) clone() Stats {
	c := s
	c.Events = maps.Clone(s.Events)
	c.InvalidSkipped = maps.Clone(s.InvalidSkipped)
	c.RendererFailures = maps.Clone(s.RendererFailures)
	c.RendererResyncs = maps.Clone(s.RendererResyncs)
	return c
}
