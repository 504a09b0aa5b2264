package k8swatch

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// nodeFactory returns the informer factory of the Node informer. By default
// it lists and watches only this node's Node, by a metadata.name field
// selector, as kube-proxy does: Node objects are large and every kubelet
// rewrites its node's status, so a cluster-wide watch would bring every
// agent every status report of the cluster. Options.AllNodes restores the
// cluster-wide watch for the one thing that needs other nodes' addresses
// (see its comment).
func nodeFactory(client kubernetes.Interface, opts Options, resync time.Duration) informers.SharedInformerFactory {
	if opts.AllNodes {
		return informers.NewSharedInformerFactory(client, resync)
	}
	return informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = ownNodeSelector(opts.NodeName)
		}))
}

// ownNodeSelector is the field selector of this node's Node object.
func ownNodeSelector(nodeName string) string {
	return fields.OneTermEqualSelector(metav1.ObjectNameField, nodeName).String()
}

// slimNode is the Node informer's transform: the cache keeps only what the
// processor reads of a Node (its name, its zone label, its addresses) and
// what the informer itself needs (resource version, UID, deletion
// timestamp), not the images, conditions and volumes lists that make a
// Node several kilobytes. Objects of another type pass unchanged.
func slimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Node{
		TypeMeta: n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion,
			DeletionTimestamp: n.DeletionTimestamp,
		},
		Status: corev1.NodeStatus{Addresses: n.Status.Addresses},
	}
	if zone, ok := n.Labels[corev1.LabelTopologyZone]; ok {
		slim.Labels = map[string]string{corev1.LabelTopologyZone: zone}
	}
	return slim, nil
}
