package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/processor"
)

// dropRouteLine matches a drop route of the fake VPP's dump.
var dropRouteLine = regexp.MustCompile(`table (\d+) (\S+) via drop`)

// dropRoutes returns the fake VPP's drop routes as "table N prefix", sorted.
func dropRoutes(fake *fakevpp.VPP) []string {
	var out []string
	for _, m := range dropRouteLine.FindAllStringSubmatch(fake.Dump(), -1) {
		out = append(out, "table "+m[1]+" "+m[2])
	}
	slices.Sort(out)
	return out
}

// droppedBy: dropped by the drop route of prefix.
func droppedBy(prefix string) want {
	return want{verdict: fakevpp.Drop, endpoints: []string{"drop route " + prefix}}
}

// Scenario: the agent runs with no service CIDR configured against an API
// server that serves ServiceCIDR objects (Kubernetes 1.33 and later) and
// made the default one from its --service-cluster-ip-range. It renders one
// drop route per service CIDR instead of one per ClusterIP, and follows
// ServiceCIDR changes with the route writes they need: a new range costs
// its route; a range being deleted loses its route and the ClusterIPs still
// in it get their own; its final removal writes nothing.
func TestServiceCIDRsFromAPIServer(t *testing.T) {
	ctx := t.Context()
	cidrs := cluster.Client.NetworkingV1().ServiceCIDRs()
	eventually(t, "the API server's default ServiceCIDR", func() string {
		sc, err := cidrs.Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if want := []string{serviceCIDRv4, serviceCIDRv6}; !slices.Equal(sc.Spec.CIDRs, want) {
			return fmt.Sprintf("spec.cidrs %v, want %v", sc.Spec.CIDRs, want)
		}
		return ""
	})

	ns := newNamespace(t)
	svcA := createService(t, ns, newService("a", dualStack))
	createSlice(t, ns, newSlice("a", "a-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.2")))
	ipA := clusterIP(t, svcA, false)
	fake := newFakeVPP()
	a := startAgent(t, fake, fake) // agent.DefaultConfig: no service CIDR configured
	a.waitFlows(t, "first sync",
		flow{localPod, hostPort(ipA, 80), reaches("10.1.1.2:8080")},
		flow{localPod, hostPort(ipA, 443), droppedBy(serviceCIDRv4)},
		flow{localPod, "10.96.255.254:80", droppedBy(serviceCIDRv4)},
		flow{localPod, "[fd00:96::ff00]:80", droppedBy(serviceCIDRv6)},
	)
	assertDropRoutes(t, fake, "the default ServiceCIDR's ranges, no route per ClusterIP", "table 0 "+serviceCIDRv4, "table 0 "+serviceCIDRv6)

	// A second range, held by a finalizer of the test's once deleted.
	const extraCIDR, holder = "10.97.0.0/24", "vppsvc.e2e/hold"
	fake.ResetCalls()
	_, err := cidrs.Create(ctx, &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-extra", Finalizers: []string{holder}},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{extraCIDR}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeServiceCIDR(t, "e2e-extra") })
	a.waitFlows(t, "the new range", flow{localPod, "10.97.0.99:80", droppedBy(extraCIDR)})
	expectCalls(t, "a new ServiceCIDR", a.settledCalls(t), map[string]int{"ip_route_add_del": 1})

	// A service in the new range (the API server allocates from it once
	// its own informer has seen it).
	var ipX string
	eventually(t, "a ClusterIP from the new range", func() string {
		svc := newService("x")
		svc.Spec.ClusterIP = "10.97.0.10"
		got, err := cluster.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			return err.Error()
		}
		ipX = got.Spec.ClusterIP
		return ""
	})
	createSlice(t, ns, newSlice("x", "x-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.3")))
	a.waitFlows(t, "the service in the new range",
		flow{localPod, ipX + ":80", reaches("10.1.1.3:8080")},
		flow{localPod, ipX + ":443", droppedBy(extraCIDR)},
	)

	// Deleted, the range stays while the finalizer holds it: it is no
	// service CIDR any more, so its route goes and x's ClusterIP, outside
	// every range, gets a route of its own.
	fake.ResetCalls()
	if err := cidrs.Delete(ctx, "e2e-extra", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	a.waitFlows(t, "the range being deleted",
		flow{localPod, ipX + ":80", reaches("10.1.1.3:8080")},
		flow{localPod, ipX + ":443", droppedBy(ipX + "/32")},
		flow{localPod, "10.97.0.99:80", untranslated},
	)
	expectCalls(t, "a ServiceCIDR being deleted", a.settledCalls(t), map[string]int{"ip_route_add_del": 2})
	assertDropRoutes(t, fake, "the default ranges and x's ClusterIP", "table 0 "+serviceCIDRv4, "table 0 "+ipX+"/32", "table 0 "+serviceCIDRv6)

	// Its final removal changes nothing more.
	fake.ResetCalls()
	events := a.proc.Stats().Events[processor.KindServiceCIDR]
	removeServiceCIDR(t, "e2e-extra")
	eventually(t, "the agent told of the removal", func() string {
		if n := a.proc.Stats().Events[processor.KindServiceCIDR]; n == events {
			return "no ServiceCIDR event yet"
		}
		if _, err := cidrs.Get(ctx, "e2e-extra", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("still there: %v", err)
		}
		return ""
	})
	expectCalls(t, "a terminating ServiceCIDR removed", a.settledCalls(t), nil)
}

// removeServiceCIDR deletes a ServiceCIDR and lets it go: without a
// controller manager nothing else removes the finalizers.
func removeServiceCIDR(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	cidrs := cluster.Client.NetworkingV1().ServiceCIDRs()
	if err := cidrs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete ServiceCIDR %s: %v", name, err)
	}
	sc, err := cidrs.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("get ServiceCIDR %s: %v", name, err)
		return
	}
	sc.Finalizers = nil
	if _, err := cidrs.Update(ctx, sc, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("release ServiceCIDR %s: %v", name, err)
	}
}

func assertDropRoutes(t *testing.T, fake *fakevpp.VPP, what string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := dropRoutes(fake); !slices.Equal(got, want) {
		t.Errorf("%s: drop routes\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
