package dnsfwd

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/link/loopback"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
)

// TestServeOverGVisor serves on gVisor's gonet adapters, as the firmware
// does: a *gonet.UDPConn is a net.PacketConn but not a *net.UDPConn, and
// a closed one reports io.EOF. The upstream is the host one.
func TestServeOverGVisor(t *testing.T) {
	u := startUpstream(t)
	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{udp.NewProtocol, tcp.NewProtocol},
	})
	defer s.Destroy()
	if e := s.CreateNIC(1, loopback.New()); e != nil {
		t.Fatal(e)
	}
	router := tcpip.AddrFrom4([4]byte{192, 168, 1, 1})
	if e := s.AddProtocolAddress(1, tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: router, PrefixLen: 24}}, stack.AddressProperties{}); e != nil {
		t.Fatal(e)
	}
	s.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, NIC: 1}})
	dnsAddr := tcpip.FullAddress{NIC: 1, Addr: router, Port: 53}

	f, err := New(testConfig(u.addr))
	if err != nil {
		t.Fatal(err)
	}
	pc, err := gonet.DialUDP(s, &dnsAddr, nil, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	l, err := gonet.ListenTCP(s, dnsAddr, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	udpDone, tcpDone := make(chan error, 1), make(chan error, 1)
	go func() { udpDone <- f.ServeUDP(pc) }()
	go func() { tcpDone <- f.ServeTCP(l) }()

	ask := func(c net.Conn, name string, tcp bool) *dns.Msg {
		t.Helper()
		q := queryBytes(t, name, dns.TypeA, true)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if tcp {
			q = append(binary.BigEndian.AppendUint16(nil, uint16(len(q))), q...)
		}
		if _, err := c.Write(q); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		var n int
		if tcp {
			if _, err := io.ReadFull(c, buf[:2]); err != nil {
				t.Fatal(err)
			}
			n = int(binary.BigEndian.Uint16(buf))
			if _, err := io.ReadFull(c, buf[:n]); err != nil {
				t.Fatal(err)
			}
		} else if n, err = c.Read(buf); err != nil {
			t.Fatal(err)
		}
		return answerUnpacks(t, buf[:n])
	}
	cu, err := gonet.DialUDP(s, nil, &dnsAddr, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer cu.Close()
	if m := ask(cu, "www.example.com.", false); len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "93.184.216.34" {
		t.Fatalf("UDP over gVisor: %v", m)
	}
	if m := ask(cu, "laptop.lan.", false); len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "192.168.1.23" {
		t.Fatalf("local name over gVisor: %v", m)
	}
	ct, err := gonet.DialContextTCP(context.Background(), s, dnsAddr, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer ct.Close()
	if m := ask(ct, "www.example.com.", true); len(m.Answer) != 1 {
		t.Fatalf("TCP over gVisor: %v", m)
	}
	if st := f.Stats(); st.CacheHits != 1 || st.LocalAnswers != 1 || u.total() != 1 {
		t.Errorf("stats %+v upstream %d", st, u.total())
	}

	pc.Close()
	l.Close()
	// A closed gonet UDPConn reads io.EOF: ServeUDP returns nil. A closed
	// gonet TCPListener's Accept fails with "endpoint is in invalid
	// state", indistinguishable from other failures: ServeTCP returns it.
	for name, ch := range map[string]chan error{"ServeUDP": udpDone, "ServeTCP": tcpDone} {
		select {
		case err := <-ch:
			if err != nil && name == "ServeUDP" {
				t.Errorf("%s after close: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not return after close", name)
		}
	}
}
