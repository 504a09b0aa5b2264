// Package clusterfile reads cluster state the way `kubectl get -o yaml` writes
// it: multi-document YAML or JSON holding Services, EndpointSlices, Nodes,
// Pods and ServiceCIDRs, bare or inside List objects.
package clusterfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/decodeerr"
)

// Cluster is the decoded content of a cluster file.
type Cluster struct {
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	Nodes          []*corev1.Node
	Pods           []*corev1.Pod
	// ServiceCIDRs are the cluster's service CIDRs (networking.k8s.io/v1):
	// without a configured service CIDR, traffic to their free addresses is
	// dropped by one route per CIDR.
	ServiceCIDRs []*networkingv1.ServiceCIDR
	// Ignored counts objects of other kinds by kind (ConfigMaps, Deployments,
	// custom resources…): valid input that plays no part in service proxying.
	// Callers report them, so that a misspelt kind does not pass unnoticed.
	Ignored map[string]int
}

// MaxFileSize is the largest cluster file Parse reads: 64 MiB. That is
// generous (8 MiB of kubectl-style YAML holds 37,000 Services), and it bounds
// what a wrong file costs before it fails: the YAML decoder allocates about
// 140 bytes per byte of input and takes about 0.25 s per MiB (measured on 8
// MiB of Services: 2 s, 1.1 GB). A bigger cluster is filtered with kubectl
// (-n, -l) first.
const MaxFileSize = 64 << 20

// maxEmptyEntries bounds the empty list entries ("-" lines) of a document.
// kubectl never writes one; YAML decodes each into a node of its own, so a
// file of them is the cheapest way to make the decoder spend seconds and
// gigabytes per MiB.
const maxEmptyEntries = 10000

// DecodeError names the document that could not be decoded.
type DecodeError struct {
	Source   string
	Document int // 1-based position in the stream
	Err      error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: document %d: %v", e.Source, e.Document, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

var decoder = serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer()

// Parse decodes every document of r. A document that does not decode is an
// error naming source and position: the caller cannot know what it was meant
// to hold, so nothing is rendered from a partly unreadable file. Input over
// MaxFileSize, and YAML that cannot hold Kubernetes objects (a list at the
// top of a document, thousands of empty list entries), is refused before
// anything is decoded: a scan of the bytes costs milliseconds where the YAML
// decoder would spend seconds and gigabytes.
func Parse(source string, r io.Reader) (*Cluster, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: over the limit of %d bytes (64 MiB) for a cluster file: filter it (kubectl get -n NAMESPACE, -l SELECTOR) or split it", source, MaxFileSize)
	}
	if err := screen(source, data); err != nil {
		return nil, err
	}
	c := &Cluster{}
	reader := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for doc := 1; ; doc++ {
		var raw runtime.RawExtension
		if err := reader.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return c, nil
			}
			return nil, &DecodeError{source, doc, plain(err)}
		}
		raw.Raw = bytes.TrimSpace(raw.Raw)
		if len(raw.Raw) == 0 || bytes.Equal(raw.Raw, []byte("null")) {
			continue
		}
		if err := c.add(raw.Raw); err != nil {
			return nil, &DecodeError{source, doc, err}
		}
	}
}

func (c *Cluster) add(data []byte) error {
	obj, gvk, err := decoder.Decode(data, nil, nil)
	if runtime.IsNotRegisteredError(err) && gvk != nil && gvk.Kind != "" {
		c.ignore(gvk.Kind)
		return nil
	}
	if err != nil {
		err = plain(err)
		if name := describe(data); name != "" {
			return fmt.Errorf("%s: %w", name, err)
		}
		return err
	}
	switch o := obj.(type) {
	case *corev1.Service:
		c.Services = append(c.Services, o)
	case *discoveryv1.EndpointSlice:
		c.EndpointSlices = append(c.EndpointSlices, o)
	case *corev1.Node:
		c.Nodes = append(c.Nodes, o)
	case *corev1.Pod:
		c.Pods = append(c.Pods, o)
	case *networkingv1.ServiceCIDR:
		c.ServiceCIDRs = append(c.ServiceCIDRs, o)
	case *corev1.List:
		for i, item := range o.Items {
			if err := c.add(item.Raw); err != nil {
				return fmt.Errorf("list item %d: %w", i+1, err)
			}
		}
	default:
		c.ignore(obj.GetObjectKind().GroupVersionKind().Kind)
	}
	return nil
}

// describe names the object a document holds ("Service default/web"), as far
// as its kind and metadata can be read although the whole failed to decode;
// "" when they cannot.
func describe(data []byte) string {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &head) != nil || head.Kind == "" || head.Metadata.Name == "" {
		return ""
	}
	if head.Metadata.Namespace != "" {
		return head.Kind + " " + head.Metadata.Namespace + "/" + head.Metadata.Name
	}
	return head.Kind + " " + head.Metadata.Name
}

// plain replaces a decoder's error by what is wrong in the file's words
// (decodeerr), keeping err when it is not one decodeerr knows.
func plain(err error) error {
	if msg, ok := decodeerr.Explain(err); ok {
		return errors.New(msg)
	}
	return err
}

func (c *Cluster) ignore(kind string) {
	if c.Ignored == nil {
		c.Ignored = map[string]int{}
	}
	c.Ignored[kind]++
}
