package k8swatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func serviceCIDR(name string, cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

// TestWatcherServiceCIDRs: the ServiceCIDR objects present at the start
// arrive in the first Resync; later ones, changes, an object that starts
// being deleted and a deletion each reach the renderers as one change of
// the set.
func TestWatcherServiceCIDRs(t *testing.T) {
	client := fake.NewClientset(node("node-a", "192.168.0.1"), serviceCIDR("kubernetes", "10.96.0.0/16", "fd00:96::/112"))
	p, r := startWatcher(t, client, Options{NodeName: "node-a"})
	r.mu.Lock()
	assert.Equal(t, "[10.96.0.0/16 fd00:96::/112]", fmt.Sprint(r.last.ServiceCIDRs), "the first Resync carries the objects' CIDRs")
	r.mu.Unlock()

	ctx := context.Background()
	cidrs := client.NetworkingV1().ServiceCIDRs()
	_, err := cidrs.Create(ctx, serviceCIDR("extra", "10.100.0.0/16"), metav1.CreateOptions{})
	require.NoError(t, err)
	r.waitFor(t, "cidrs [10.96.0.0/16 10.100.0.0/16 fd00:96::/112]")

	_, err = cidrs.Update(ctx, serviceCIDR("extra", "10.100.0.0/24"), metav1.UpdateOptions{})
	require.NoError(t, err)
	r.waitFor(t, "cidrs [10.96.0.0/16 10.100.0.0/24 fd00:96::/112]")

	being := serviceCIDR("extra", "10.100.0.0/24")
	now := metav1.NewTime(time.Now())
	being.DeletionTimestamp = &now
	being.Finalizers = []string{"networking.k8s.io/service-cidr-finalizer"}
	_, err = cidrs.Update(ctx, being, metav1.UpdateOptions{})
	require.NoError(t, err)
	r.waitFor(t, "cidrs [10.96.0.0/16 fd00:96::/112]")

	require.NoError(t, cidrs.Delete(ctx, "kubernetes", metav1.DeleteOptions{}))
	r.waitFor(t, "cidrs []")
	assert.Empty(t, p.ServiceCIDRs())
}

// TestWatcherServiceCIDRsUnavailable: on an API server without ServiceCIDR
// objects, or an agent not allowed to list them, the watcher runs on
// without them (the processor then knows none: a drop route per
// ClusterIP) and says why once, with fields; NoServiceCIDRs does not ask.
func TestWatcherServiceCIDRsUnavailable(t *testing.T) {
	gr := schema.GroupResource{Group: "networking.k8s.io", Resource: "servicecidrs"}
	tests := []struct {
		name    string
		err     error
		opts    Options
		level   logrus.Level
		message string
		lists   int
	}{
		{name: "API absent", err: apierrors.NewNotFound(gr, ""), level: logrus.InfoLevel, message: "serves no ServiceCIDR objects", lists: 1},
		{name: "forbidden", err: apierrors.NewForbidden(gr, "", fmt.Errorf("RBAC")), level: logrus.WarnLevel, message: "not allowed to list", lists: 1},
		{name: "failing", err: apierrors.NewServiceUnavailable("restarting"), level: logrus.WarnLevel, message: "cannot list", lists: serviceCIDRProbeAttempts},
		{name: "not wanted", opts: Options{NoServiceCIDRs: true}},
	}
	defer func(d time.Duration) { serviceCIDRProbeDelay = d }(serviceCIDRProbeDelay)
	serviceCIDRProbeDelay = time.Millisecond
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(node("node-a", "192.168.0.1"), serviceCIDR("kubernetes", "10.96.0.0/16"))
			lists := 0
			client.PrependReactor("list", "servicecidrs", func(k8stesting.Action) (bool, runtime.Object, error) {
				lists++
				if tt.err == nil {
					return false, nil, nil
				}
				return true, nil, tt.err
			})
			log, hook := logtest.NewNullLogger()
			tt.opts.NodeName, tt.opts.Logger = "node-a", log
			_, r := startWatcherWith(t, client, tt.opts, false)
			r.mu.Lock()
			assert.Empty(t, r.last.ServiceCIDRs)
			r.mu.Unlock()
			assert.Equal(t, tt.lists, lists, "list calls of servicecidrs")

			var said []*logrus.Entry
			for _, e := range hook.AllEntries() {
				if e.Data["resource"] == serviceCIDRResource {
					said = append(said, e)
				}
			}
			if tt.message == "" {
				assert.Empty(t, said)
				return
			}
			require.Len(t, said, 1, "said once")
			assert.Equal(t, tt.level, said[0].Level)
			assert.Contains(t, said[0].Message, tt.message)
			assert.Equal(t, "a drop route per ClusterIP", said[0].Data["fallback"])
		})
	}
}
