package processor

import (
	"context"
	"time"

	"github.com/vppsvc/vppsvc/model"
)

// Run retries the resync of dirty renderers until ctx is done. Without Run, a
// renderer that failed stays dirty (skipped) until the next Resync call.
func (p *Processor) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		p.mu.Lock()
		next := p.retryDue(p.now())
		p.mu.Unlock()

		var timeout <-chan time.Time
		if !next.IsZero() {
			timer.Reset(max(next.Sub(p.now()), 0))
			timeout = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timeout:
		}
		timer.Stop() // since Go 1.23 a stopped timer delivers no stale tick
	}
}

// retryDue resyncs every dirty renderer whose retry time has come and returns
// the earliest retry time still pending, or the zero time when none is.
func (p *Processor) retryDue(now time.Time) time.Time {
	var next time.Time
	data := p.lazyResyncData()
	for _, rs := range p.renderers {
		if !rs.dirty {
			continue
		}
		if !rs.retryAt.After(now) {
			p.resyncRenderer(rs, data())
		}
		if rs.dirty && (next.IsZero() || rs.retryAt.Before(next)) {
			next = rs.retryAt
		}
	}
	return next
}

// lazyResyncData builds the whole state at most once per retry round, and
// only if some renderer needs it.
func (p *Processor) lazyResyncData() func() *model.ResyncEventData {
	var data *model.ResyncEventData
	return func() *model.ResyncEventData {
		if data == nil {
			data = p.resyncData()
		}
		return data
	}
}

// backoff returns the delay before retry number n (1-based): RetryMin doubled
// per consecutive failure, capped at RetryMax.
func (p *Processor) backoff(n int) time.Duration {
	d := p.cfg.RetryMin
	for i := 1; i < n && d < p.cfg.RetryMax; i++ {
		d *= 2
	}
	return min(d, p.cfg.RetryMax)
}
