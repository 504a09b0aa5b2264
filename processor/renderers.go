package processor

import (
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
)

type renderer = vppsvc.ServiceRendererAPI

// rendererState is one registered renderer and its retry state.
//
// A renderer that fails any call is marked dirty: the processor can no longer
// know what the renderer holds, so a replay of the failed call would not be
// enough once later changes pile up. While dirty it gets no incremental call;
// Run retries a full Resync with exponential backoff until one succeeds. This
// is kube-proxy's needFullSync idea, kept per renderer so that one failing
// renderer never holds back the others.
type rendererState struct {
	name string
	r    renderer
	// dirty is set after a failed call and cleared by a successful Resync.
	dirty bool
	// failures counts consecutive failures; it sets the backoff.
	failures int
	// retryAt is when Run may retry a dirty renderer.
	retryAt time.Time
}

// RegisterRenderer adds a renderer under a name used in logs and Stats.
// Registered after the first Resync, it gets a Resync of its own at once.
// Registering a name again replaces the renderer registered under it.
func (p *Processor) RegisterRenderer(name string, r vppsvc.ServiceRendererAPI) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rs := &rendererState{name: name, r: r}
	replaced := false
	for i, old := range p.renderers {
		if old.name == name {
			p.renderers[i] = rs
			replaced = true
			break
		}
	}
	if !replaced {
		p.renderers = append(p.renderers, rs)
	} else {
		p.log.WithField("renderer", name).Warn("renderer registered again; replacing the previous one")
	}
	if p.synced {
		p.resyncRenderer(rs, p.resyncData())
	}
}

// fanOut makes one incremental call on every renderer that is not dirty. A
// failure marks only that renderer dirty.
func (p *Processor) fanOut(op, service string, call func(renderer) error) {
	for _, rs := range p.renderers {
		if rs.dirty {
			continue
		}
		if err := call(rs.r); err != nil {
			p.failed(rs, op, service, err)
		}
	}
}

// resyncRenderer hands one renderer the whole state; success makes it clean.
func (p *Processor) resyncRenderer(rs *rendererState, data *model.ResyncEventData) {
	p.stats.RendererResyncs[rs.name]++
	if err := rs.r.Resync(data); err != nil {
		p.failed(rs, "Resync", "", err)
		return
	}
	if rs.dirty {
		p.log.WithFields(logrus.Fields{"renderer": rs.name, "failures": rs.failures}).Info("renderer recovered by resync")
	}
	rs.dirty = false
	rs.failures = 0
}

// failed records a failed call and schedules the renderer's resync.
func (p *Processor) failed(rs *rendererState, op, service string, err error) {
	p.stats.RendererFailures[rs.name]++
	rs.dirty = true
	rs.failures++
	delay := p.backoff(rs.failures)
	rs.retryAt = p.now().Add(delay)
	fields := logrus.Fields{"renderer": rs.name, "op": op, "failures": rs.failures, "retry_in": delay.String()}
	if service != "" {
		fields["service"] = service
	}
	p.log.WithFields(fields).WithError(err).Warn("renderer call failed; renderer will be resynced")
	select {
	case p.wake <- struct{}{}:
	default:
	}
}
