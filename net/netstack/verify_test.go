package netstack

import (
	"testing"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// verifyingStack is a gVisor stack at ourIP on an Endpoint over a
// frameNIC, with no TCP listener: a valid segment it takes is answered
// with a RST, a segment whose checksum it finds wrong is dropped and
// counted as malformed.
func verifyingStack(t *testing.T) (*Endpoint, *frameNIC, *stack.Stack) {
	t.Helper()
	n := &frameNIC{mtu: 1500}
	e, err := NewEndpoint(n)
	if err != nil {
		t.Fatal(err)
	}
	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, arp.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol},
	})
	t.Cleanup(s.Close)
	if err := CreateNIC(s, 1, e); err != nil { // the stack sends through e.QDisc
		t.Fatal(err)
	}
	if err := s.AddProtocolAddress(1, tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddrFrom4(ourIP).WithPrefix()}, stack.AddressProperties{}); err != nil {
		t.Fatal(err)
	}
	s.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, NIC: 1}})
	if err := s.AddStaticNeighbor(1, ipv4.ProtocolNumber, tcpip.AddrFrom4(peerIP), "\x02\x00\x00\x00\x00\x64"); err != nil {
		t.Fatal(err)
	}
	return e, n, s
}

// resets counts the RSTs among frames.
func resets(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		ip := header.IPv4(f[header.EthernetMinimumSize:])
		if ip.Protocol() == uint8(header.TCPProtocolNumber) && header.TCP(ip.Payload()).Flags().Contains(header.TCPFlagRst) {
			n++
		}
	}
	return n
}

// TestCorruptSegmentReachesStackChecked: in a receive pass, a segment
// with a corrupted payload between two valid ones is dropped by gVisor's
// own check (counted malformed, not answered), while the valid ones,
// which the Endpoint vouched for, are taken (each answered with a RST).
func TestCorruptSegmentReachesStackChecked(t *testing.T) {
	for name, deliver := range deliveries {
		t.Run(name, func(t *testing.T) {
			e, n, s := verifyingStack(t)
			bad := seg{seq: 1100, payload: payload(1000, 2)}.frame()
			bad[len(bad)-10] ^= 0x40
			inPassBy(e, deliver, seg{seq: 100, payload: payload(1000, 1)}.frame(), bad, seg{seq: 2100, payload: payload(1000, 3)}.frame())
			if got := s.Stats().NICs.MalformedL4RcvdPackets.Value(); got != 1 {
				t.Errorf("stack counted %d malformed segments, want the corrupted one", got)
			}
			if got := resets(n.frames); got != 2 {
				t.Errorf("stack answered %d segments, want the 2 valid ones", got)
			}
		})
	}
}

// TestStackTrustsVerifiedPacket shows what the Endpoint relies on: gVisor
// asks the link whether checksums were verified for each packet it takes,
// so a packet delivered while rxVerified is set is not checked again. (A
// gVisor that asked once, at NIC creation, would fail this: it would check
// every packet, and coalescing would no longer spare that work.)
func TestStackTrustsVerifiedPacket(t *testing.T) {
	e, n, s := verifyingStack(t)
	bad := seg{seq: 1100, payload: payload(1000, 2)}.frame()
	bad[len(bad)-10] ^= 0x40
	e.ReceiveView(buffer.NewViewWithData(bad)) // unverified: checked, dropped
	e.rxVerified.Store(true)
	e.ReceiveView(buffer.NewViewWithData(bad)) // vouched for: taken as it is
	e.rxVerified.Store(false)
	if got := s.Stats().NICs.MalformedL4RcvdPackets.Value(); got != 1 {
		t.Errorf("stack counted %d malformed segments, want 1 (the unverified delivery)", got)
	}
	if got := resets(n.frames); got != 1 {
		t.Errorf("stack answered %d segments, want 1 (the vouched-for delivery)", got)
	}
}
