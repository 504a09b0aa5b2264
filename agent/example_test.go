package agent_test

import (
	"context"
	"log"
	"net/netip"
	"os"
	"os/signal"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/examples/frontendacl"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/processor/k8swatch"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppsock"
)

// A CNI agent embeds vppsvc with agent.New, which wires what `vppsvc run`
// runs: the govpp driver behind a gate that holds commits until VPP is
// connected, the VPP layer with the IPv6 renderer's claims on untagged cnat
// translations (so translations of services deleted while the agent was
// down are removed), the processor, and the NAT44 and IPv6 renderers; plus,
// here, a renderer of the embedder's (examples/frontendacl) next to them.
// The README's embedding snippet is this example; it is compiled by go test,
// so it cannot drift from the API.
func ExampleNew() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	node := "node-a"
	nodeIPs := []netip.Addr{netip.MustParseAddr("192.168.16.1")} // the Node's InternalIPs
	cfg, err := agent.LoadConfig("", nodeIPs)                    // defaults from the node's IPs; or a --config file
	if err != nil {
		log.Fatal(err)
	}
	a, err := agent.New(agent.Options{
		NodeName:           node,
		FrontendInterfaces: []string{"uplink0", "host0"}, // where clients other than local pods arrive
		Config:             cfg,
		VPP:                vppsock.New("/run/vpp/api.sock"),
		Log:                logrus.StandardLogger(),
		ExtraRenderers: map[string]agent.ExtraRenderer{frontendacl.Name: {
			New: func(c vppcfg.Client, log logrus.FieldLogger) (vppsvc.ServiceRendererAPI, error) {
				return frontendacl.New(c, log)
			},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close() // VPP keeps its configuration; the next start changes nothing that is right

	restCfg, err := rest.InClusterConfig()
	if err != nil {
		log.Fatal(err)
	}
	go k8swatch.New(kubernetes.NewForConfigOrDie(restCfg), a.Processor, k8swatch.Options{NodeName: node}).Run(ctx)
	if err := a.Start(ctx); err != nil { // returns once VPP is connected and compared with the desired state
		log.Fatal(err)
	}
	// From the CNI, for every pod it wires on this node:
	a.Processor.UpdateLocalPod(processor.LocalPod{
		ID: processor.PodID{Namespace: "default", Name: "web-a1"}, IPs: []netip.Addr{netip.MustParseAddr("10.1.1.2")}, Interface: "tap3"})
	<-a.LayerDone()
}
