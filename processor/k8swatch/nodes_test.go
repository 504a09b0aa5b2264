package k8swatch

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vppsvc/vppsvc/processor"
)

// nodeSelectors returns the field selectors of every list and watch of
// Nodes the client saw.
func nodeSelectors(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		if a.GetResource().Resource != "nodes" {
			continue
		}
		switch a := a.(type) {
		case k8stesting.ListAction:
			out = append(out, "list "+a.GetListRestrictions().Fields.String())
		case k8stesting.WatchAction:
			out = append(out, "watch "+a.GetWatchRestrictions().Fields.String())
		}
	}
	return out
}

// backendsOf returns the backends of the first port of the rendered service.
func backendsOf(t *testing.T, p *processor.Processor, id string) string {
	t.Helper()
	for _, s := range p.Services() {
		if s.ID.String() == id {
			return s.String()
		}
	}
	t.Fatalf("service %s not rendered", id)
	return ""
}

// The watcher lists and watches only this node's Node, as kube-proxy does;
// another node's status updates never reach the processor, and its
// addresses are not node IPs. With AllNodes every Node is watched.
func TestWatcherWatchesNodes(t *testing.T) {
	for _, tc := range []struct {
		name          string
		opts          Options
		wantSelectors []string
		// wantNodeEvents is the processor's Node events caused by one
		// update of node-b followed by one of node-a.
		wantNodeEvents uint64
		// wantHostNet says whether an endpoint on node-b's address is a
		// host-network endpoint.
		wantHostNet bool
	}{{
		name:           "own Node only",
		opts:           Options{NodeName: "node-a"},
		wantSelectors:  []string{"list metadata.name=node-a", "watch metadata.name=node-a"},
		wantNodeEvents: 1,
	}, {
		name:           "AllNodes",
		opts:           Options{NodeName: "node-a", AllNodes: true},
		wantSelectors:  []string{"list ", "watch "},
		wantNodeEvents: 2,
		wantHostNet:    true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(
				service("web", "10.96.0.10"),
				slice("web-1", "web", "192.168.0.2", "10.244.2.1", "192.168.0.1"),
				node("node-a", "192.168.0.1"),
				node("node-b", "192.168.0.2"),
			)
			p, r := startWatcher(t, client, tc.opts)
			assert.Equal(t, tc.wantSelectors, nodeSelectors(client))
			// This node's own address is a node IP either way.
			assert.Contains(t, backendsOf(t, p, "default/web"), "192.168.0.1:8080(hostnet)")
			assert.Equal(t, tc.wantHostNet, strings.Contains(backendsOf(t, p, "default/web"), "192.168.0.2:8080(hostnet)"))

			before := p.Stats().Events[processor.KindNode]
			ctx := context.Background()
			b := node("node-b", "192.168.0.2")
			b.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
			_, err := client.CoreV1().Nodes().UpdateStatus(ctx, b, metav1.UpdateOptions{})
			require.NoError(t, err)
			_, err = client.CoreV1().Nodes().UpdateStatus(ctx, node("node-a", "192.168.0.9"), metav1.UpdateOptions{})
			require.NoError(t, err)
			r.waitFor(t, "nodeports {192.168.0.9}")
			assert.Equal(t, tc.wantNodeEvents, p.Stats().Events[processor.KindNode]-before)
		})
	}
}

func TestSlimNode(t *testing.T) {
	ts := metav1.Now()
	full := &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "node-a", UID: "u1", ResourceVersion: "42", DeletionTimestamp: &ts,
			Labels:      map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelHostname: "node-a"},
			Annotations: map[string]string{"a": "b"},
		},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24"},
		Status: corev1.NodeStatus{
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.0.1"}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Images:     []corev1.ContainerImage{{Names: []string{"img"}, SizeBytes: 1}},
		},
	}
	want := &corev1.Node{
		TypeMeta: full.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: "node-a", UID: "u1", ResourceVersion: "42", DeletionTimestamp: &ts,
			Labels: map[string]string{corev1.LabelTopologyZone: "z1"},
		},
		Status: corev1.NodeStatus{Addresses: full.Status.Addresses},
	}
	noZone := full.DeepCopy()
	noZone.Labels = map[string]string{corev1.LabelHostname: "node-a"}
	wantNoZone := want.DeepCopy()
	wantNoZone.Labels = nil
	svc := service("web", "10.96.0.10")
	for name, tc := range map[string]struct{ in, want any }{
		"keeps name, zone and addresses": {full, want},
		"no zone label":                  {noZone, wantNoZone},
		"another type passes":            {svc, svc},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := slimNode(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
