package k8swatch

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// serviceCIDRResource names the ServiceCIDR objects in logs.
const serviceCIDRResource = "networking.k8s.io/v1 servicecidrs"

// serviceCIDRProbeAttempts bounds the tries of serviceCIDRsServed on errors
// that may pass (the API server restarting, a timeout); the delay doubles
// from serviceCIDRProbeDelay between them (a variable for tests).
const serviceCIDRProbeAttempts = 4

var serviceCIDRProbeDelay = 250 * time.Millisecond

// serviceCIDRsServed tells whether ServiceCIDR objects can be watched: the
// API server serves them (Kubernetes 1.33 and later) and this agent may
// list them. It lists at most one object. Without them the watcher runs on
// and the processor knows no ServiceCIDR, so each ClusterIP gets its own
// drop route: the behaviour before ServiceCIDRs. The reason is logged once,
// with fields; only an error that may pass is tried again, a few times.
func (w *Watcher) serviceCIDRsServed(ctx context.Context) bool {
	delay := serviceCIDRProbeDelay
	for attempt := 1; ; attempt++ {
		_, err := w.client.NetworkingV1().ServiceCIDRs().List(ctx, metav1.ListOptions{Limit: 1})
		log := w.log.WithFields(logrus.Fields{"resource": serviceCIDRResource, "fallback": "a drop route per ClusterIP"})
		switch {
		case err == nil:
			return true
		case apierrors.IsNotFound(err):
			log.Info("the API server serves no ServiceCIDR objects (before Kubernetes 1.33); service CIDRs come from configuration only")
			return false
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			log.WithError(err).Warn("not allowed to list ServiceCIDR objects: grant list and watch on servicecidrs (docs/deploy); service CIDRs come from configuration only")
			return false
		case attempt >= serviceCIDRProbeAttempts || ctx.Err() != nil:
			log.WithError(err).WithField("attempts", attempt).Warn("cannot list ServiceCIDR objects; service CIDRs come from configuration only until the agent restarts")
			return false
		}
		select {
		case <-time.After(delay):
			delay *= 2
		case <-ctx.Done():
		}
	}
}

func (w *Watcher) updateServiceCIDR(obj any) {
	if sc, ok := obj.(*networkingv1.ServiceCIDR); ok {
		w.p.UpdateServiceCIDR(sc)
	} else {
		w.unexpected("ServiceCIDR", obj)
	}
}
