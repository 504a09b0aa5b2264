// Package controlplane is Kubernetes' side of the lab: etcd and
// kube-apiserver in process, kube-controller-manager's own EndpointSlice
// controller, the nodes' Node objects, and a LoadBalancer allocator that
// plays MetalLB's controller.
package controlplane

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controller/endpointslice"

	"github.com/vppsvc/vppsvc/e2e/internal/kubecluster"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
)

// labToken authenticates everything in the lab (system:masters).
const labToken = "vppsvc-lab-token"

// ControlPlane is Kubernetes' side of the lab: etcd and kube-apiserver in
// process, kube-controller-manager's own EndpointSlice controller, and a
// LoadBalancer allocator. No scheduler: tests bind pods by spec.nodeName,
// and every node's agent acts as its kubelet.
type ControlPlane struct {
	Cluster *kubecluster.Cluster
	Client  kubernetes.Interface
	cancel  context.CancelFunc
	done    chan struct{}
}

// Start starts the API server, the controllers, and creates the
// nodes' Node objects (with pod CIDRs, addresses and a Ready condition).
func Start(nodes []topology.Node, verbose bool) (*ControlPlane, error) {
	c, err := kubecluster.Start(kubecluster.Options{
		ServiceCIDRs:  []string{topology.ServiceCIDRV4.String(), topology.ServiceCIDRV6.String()},
		NodePortRange: topology.NodePortRange,
		Token:         labToken,
		Verbose:       verbose,
	})
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, fmt.Errorf("control plane: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cp := &ControlPlane{Cluster: c, Client: c.Client, cancel: cancel, done: make(chan struct{})}
	for _, n := range nodes {
		if err := cp.createNode(ctx, n); err != nil {
			cp.Close()
			return nil, err
		}
	}
	factory := informers.NewSharedInformerFactory(c.Client, 0)
	slices := endpointslice.NewController(ctx,
		factory.Core().V1().Pods(), factory.Core().V1().Services(), factory.Core().V1().Nodes(),
		factory.Discovery().V1().EndpointSlices(),
		100, // kube-controller-manager's default --max-endpoints-per-slice
		c.Client,
		0, // no batching: a pod's readiness reaches its slice at once, as with the default
	)
	lb := newLoadBalancerAllocator(c.Client, factory.Core().V1().Services())
	factory.Start(ctx.Done())
	go func() {
		defer close(cp.done)
		go lb.run(ctx)
		slices.Run(ctx, 2)
	}()
	return cp, nil
}

func (cp *ControlPlane) createNode(ctx context.Context, n topology.Node) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{
		"kubernetes.io/hostname": n.Name,
		"kubernetes.io/os":       "linux",
	}}}
	for _, c := range n.PodCIDRs() {
		node.Spec.PodCIDRs = append(node.Spec.PodCIDRs, c.String())
	}
	node.Spec.PodCIDR = node.Spec.PodCIDRs[0]
	created, err := cp.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = cp.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err)
	}
	created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: n.Name}}
	for _, ip := range n.IPs() {
		created.Status.Addresses = append(created.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
	}
	now := metav1.Now()
	created.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now,
	}}
	if _, err := cp.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("node %s status: %w", n.Name, err)
	}
	return nil
}

// WriteKubeconfig writes a kubeconfig for kubectl and the node agents.
func (cp *ControlPlane) WriteKubeconfig(path string) error { return cp.Cluster.WriteKubeconfig(path) }

// Close stops the controllers and the API server and removes etcd's data.
func (cp *ControlPlane) Close() {
	cp.cancel()
	select {
	case <-cp.done:
	case <-time.After(10 * time.Second):
	}
	cp.Cluster.Close()
}
