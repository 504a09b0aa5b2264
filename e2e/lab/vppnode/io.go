package vppnode

import (
	"context"
	"fmt"
	"strings"

	"go.fd.io/govpp/binapi/af_packet"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
)

// IO is how a lab VPP moves packets to and from a veth: the af_packet
// ring format and depth, and whether VPP sleeps until the kernel wakes it
// (interrupt) or polls. docs/performance.md ("The lab's VPP I/O") measures
// each against the others and against a kernel router, same run; the
// figures chose DefaultIO.
type IO struct {
	// Name is how a person, the lab's --io flag and VPPSVC_LAB_IO call it.
	Name string
	// V2 asks for TPACKET_V2 rings: the kernel marks each frame ready as
	// it writes it and wakes VPP at once. TPACKET_V3 (false) hands VPP
	// whole blocks, a block when it is full or 1 ms after its first frame
	// (af_packet.c sets tp_retire_blk_tov to 1): a lone packet waits up to
	// a millisecond at every af_packet hop.
	V2 bool
	// Frames is the depth of each ring (RX and TX), in frames.
	Frames uint32
	// Polling puts the interface's RX queue in polling mode: VPP's main
	// loop never sleeps while one queue polls, so it costs a core.
	Polling bool
}

// frameSize is an af_packet frame that holds a GSO packet of 64 KB and
// its headers, what VPP 25.10 uses by default (2048 × 33): with checksum
// and GSO offload on (AF_PACKET_API_FLAG_CKSUM_GSO), the veth hands VPP
// TCP segments of up to 64 KB, and a TPACKET_V2 frame must hold a whole
// one (a TPACKET_V3 block holds frames of any size up to the block).
const frameSize = 2048 * 33

// The I/O settings the lab knows, by name.
var (
	// IOv3 is VPP 25.10's default ring format, TX ring cut to RingFrames
	// (the lab's setting before the I/O was measured).
	IOv3 = IO{Name: "v3", Frames: RingFrames}
	// IOv2 is TPACKET_V2 rings of RingFrames frames each way, interrupt
	// mode.
	IOv2 = IO{Name: "v2", V2: true, Frames: RingFrames}
	// IOv2Polling is IOv2 with VPP polling its RX queues.
	IOv2Polling = IO{Name: "v2-poll", V2: true, Frames: RingFrames, Polling: true}
)

// KnownIO lists the settings ParseIO accepts.
var KnownIO = []IO{IOv2, IOv3, IOv2Polling}

// EnvIO names the lab's VPP I/O setting (ParseIO) when no flag does.
const EnvIO = "VPPSVC_LAB_IO"

// DefaultIO is what the lab's VPP nodes use unless told otherwise:
// TPACKET_V2 in interrupt mode. Against V3 in the same run it cut the
// round trip through one VPP from 1 ms to 0.12 ms and gave 4× the new
// connections per second; polling gained nothing on the lab's 2 cores
// and costs a core per VPP (docs/performance.md, "The lab's VPP I/O").
var DefaultIO = IOv2

// ParseIO finds a known setting by name; "" is DefaultIO.
func ParseIO(name string) (IO, error) {
	if name == "" {
		return DefaultIO, nil
	}
	var names []string
	for _, io := range KnownIO {
		if io.Name == name {
			return io, nil
		}
		names = append(names, io.Name)
	}
	return IO{}, fmt.Errorf("VPP I/O %q: want one of %s", name, strings.Join(names, ", "))
}

// rings names the ring format and depth, which only a new interface can
// change (VPP's af_packet_dump does not report them).
func (io IO) rings() string {
	v := 3
	if io.V2 {
		v = 2
	}
	return fmt.Sprintf("v%d-%d", v, io.Frames)
}

// createRequest is the af_packet_create_v3 request for a veth with this
// I/O. Ethernet mode; one queue each way; qdisc bypass (VPP's frames go
// straight to the veth's transmit, as the CLI's default); checksum and GSO
// offload, what the CLI's "create host-interface" sets by default and the
// API does not: without it VPP forwards a veth's TCP segments, whose
// checksums the kernel left for the device to fill in, unfilled, and the
// receiver drops them (ping works, TCP does not).
func (io IO) createRequest(hostIf string) *af_packet.AfPacketCreateV3 {
	req := &af_packet.AfPacketCreateV3{
		Mode:             af_packet.AF_PACKET_API_MODE_ETHERNET,
		HostIfName:       hostIf,
		Flags:            af_packet.AF_PACKET_API_FLAG_QDISC_BYPASS | af_packet.AF_PACKET_API_FLAG_CKSUM_GSO,
		NumRxQueues:      1,
		NumTxQueues:      1,
		TxFramesPerBlock: io.Frames,
	}
	if io.V2 {
		req.Flags |= af_packet.AF_PACKET_API_FLAG_VERSION_2
		// VPP's V2 default is one RX block of 1,024 frames of 66 KB
		// (69 MB), which the kernel zeroes on VPP's one thread.
		req.RxFramesPerBlock = io.Frames
		req.RxFrameSize = frameSize
	}
	return req
}

// setRxMode puts every RX queue of VPP's interface sw in polling or
// interrupt mode, where it is not already.
func (c *Client) setRxMode(ctx context.Context, sw interface_types.InterfaceIndex, name string, polling bool) error {
	want := interface_types.RX_MODE_API_INTERRUPT
	if polling {
		want = interface_types.RX_MODE_API_POLLING
	}
	ic := interfaces.NewServiceClient(c.api)
	qs, err := recvAll[*interfaces.SwInterfaceRxPlacementDetails](ic.SwInterfaceRxPlacementDump(ctx, &interfaces.SwInterfaceRxPlacementDump{SwIfIndex: sw}))
	if err != nil {
		return fmt.Errorf("sw_interface_rx_placement_dump %s: %w", name, err)
	}
	for _, q := range qs {
		if q.SwIfIndex != sw || q.Mode == want {
			continue
		}
		_, err := ic.SwInterfaceSetRxMode(ctx, &interfaces.SwInterfaceSetRxMode{SwIfIndex: sw, QueueIDValid: true, QueueID: q.QueueID, Mode: want})
		c.changed("sw_interface_set_rx_mode")
		if err != nil {
			return fmt.Errorf("rx-mode of %s queue %d: %w", name, q.QueueID, err)
		}
	}
	return nil
}
