package nictest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/netstack"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"
)

// NewStack builds a gVisor stack (IPv4, ARP, ICMP, TCP) whose NIC 1 is nic
// through a netstack.Endpoint, with addr/24 and a default route. The stack is
// closed when the test ends. opts, if given, configure the Endpoint.
func NewStack(t testing.TB, nic gnet.NIC, addr tcpip.Address, opts ...netstack.Options) (*stack.Stack, *netstack.Endpoint) {
	t.Helper()
	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, arp.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, icmp.NewProtocol4},
	})
	var o netstack.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	// Router-sized TCP buffers: at most ~180 full segments in flight, so
	// a window burst fits the Endpoint's default TX queue (gVisor's 1 MiB+
	// defaults burst past it and then sit in loss recovery).
	sndBuf := tcpip.TCPSendBufferSizeRangeOption{Min: 4 << 10, Default: 128 << 10, Max: 256 << 10}
	rcvBuf := tcpip.TCPReceiveBufferSizeRangeOption{Min: 4 << 10, Default: 128 << 10, Max: 256 << 10}
	if e := s.SetTransportProtocolOption(tcp.ProtocolNumber, &sndBuf); e != nil {
		t.Fatalf("TCP send buffer: %v", e)
	}
	if e := s.SetTransportProtocolOption(tcp.ProtocolNumber, &rcvBuf); e != nil {
		t.Fatalf("TCP receive buffer: %v", e)
	}
	ep, err := netstack.NewEndpointOptions(nic, o)
	if err != nil {
		t.Fatal(err)
	}
	if e := netstack.CreateNIC(s, 1, ep); e != nil {
		t.Fatalf("CreateNIC: %v", e)
	}
	if err := ep.BindStack(s, 1); err != nil {
		t.Fatal(err)
	}
	if e := s.AddProtocolAddress(1, tcpip.ProtocolAddress{
		Protocol:          ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: addr, PrefixLen: 24},
	}, stack.AddressProperties{}); e != nil {
		t.Fatalf("AddProtocolAddress: %v", e)
	}
	s.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, NIC: 1}})
	t.Cleanup(func() { s.Close(); s.Wait() })
	return s, ep
}

// Ping sends one ICMP echo request with payload from s to dst and waits up
// to timeout for the matching reply.
func Ping(s *stack.Stack, dst tcpip.Address, payload []byte, timeout time.Duration) error {
	var wq waiter.Queue
	ep, e := s.NewEndpoint(icmp.ProtocolNumber4, ipv4.ProtocolNumber, &wq)
	if e != nil {
		return fmt.Errorf("NewEndpoint: %v", e)
	}
	defer ep.Close()
	we, ch := waiter.NewChannelEntry(waiter.ReadableEvents)
	wq.EventRegister(&we)
	defer wq.EventUnregister(&we)

	req := make([]byte, header.ICMPv4MinimumSize+len(payload))
	h := header.ICMPv4(req)
	h.SetType(header.ICMPv4Echo)
	h.SetSequence(1)
	copy(req[header.ICMPv4MinimumSize:], payload)
	deadline := time.Now().Add(timeout)
	for {
		var r bytes.Reader
		r.Reset(req)
		_, e = ep.Write(&r, tcpip.WriteOptions{To: &tcpip.FullAddress{NIC: 1, Addr: dst}})
		if e == nil {
			break
		}
		if _, ok := e.(*tcpip.ErrWouldBlock); !ok || time.Now().After(deadline) {
			return fmt.Errorf("write: %v", e)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		var out bytes.Buffer
		_, e := ep.Read(&out, tcpip.ReadOptions{})
		if e == nil {
			rep := header.ICMPv4(out.Bytes())
			if rep.Type() != header.ICMPv4EchoReply {
				return fmt.Errorf("got ICMP type %d, want echo reply", rep.Type())
			}
			if !bytes.Equal(rep.Payload(), payload) {
				return fmt.Errorf("echo payload mismatch")
			}
			return nil
		}
		if _, ok := e.(*tcpip.ErrWouldBlock); !ok {
			return fmt.Errorf("read: %v", e)
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			return fmt.Errorf("no echo reply from %v within %v", dst, timeout)
		}
	}
}
