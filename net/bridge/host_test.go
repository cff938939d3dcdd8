package bridge_test

import (
	"context"
	"crypto/sha256"
	"io"
	"math/rand"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/nictest"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
)

var (
	routerIP = tcpip.AddrFrom4([4]byte{192, 168, 1, 1})
	hostAIP  = tcpip.AddrFrom4([4]byte{192, 168, 1, 2})
	hostBIP  = tcpip.AddrFrom4([4]byte{192, 168, 1, 3})
)

// TestHostPortAndNICPorts builds br-lan: a bridge over two NIC ports with
// the router's own gVisor stack as host port, and a gVisor host behind
// each NIC. Hosts reach the router and each other; host-to-host traffic is
// bridged without entering the router's stack; a cable pull on one port
// cuts that host off and plugging it back restores it.
func TestHostPortAndNICPorts(t *testing.T) {
	br, err := bridge.New(bridge.Config{MAC: gnet.MAC{0x02, 0xbb, 0, 0, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	hn, err := br.AddHostPort(bridge.DefaultVLANs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := br.AddHostPort(bridge.DefaultVLANs); err == nil {
		t.Fatal("second host port accepted")
	}
	router, _ := nictest.NewStack(t, hn, routerIP)

	lan0, farA := nictest.Pair(nictest.Config{MAC: gnet.MAC{0x02, 0xbb, 0, 0, 0, 2}},
		nictest.Config{MAC: gnet.MAC{0x02, 0, 0, 0, 0, 0xa}})
	lan1, farB := nictest.Pair(nictest.Config{MAC: gnet.MAC{0x02, 0xbb, 0, 0, 0, 3}},
		nictest.Config{MAC: gnet.MAC{0x02, 0, 0, 0, 0, 0xb}, Caps: gnet.CapScatterGather})
	p0, err := br.AttachNIC(lan0, bridge.DefaultVLANs)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := br.AttachNIC(lan1, bridge.DefaultVLANs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lan0.Stop(); lan1.Stop() })
	a, _ := nictest.NewStack(t, farA, hostAIP)
	b, _ := nictest.NewStack(t, farB, hostBIP)

	if err := nictest.Ping(a, routerIP, []byte("router?"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := nictest.Ping(router, hostBIP, []byte("from router"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	echoes := router.Stats().ICMP.V4.PacketsReceived.EchoRequest.Value()
	if err := nictest.Ping(a, hostBIP, []byte("bridged"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := router.Stats().ICMP.V4.PacketsReceived.EchoRequest.Value(); got != echoes {
		t.Fatalf("router stack saw %d echo requests meant for another host", got-echoes)
	}
	if br.PortStats(p0).RxFrames.Load() == 0 || br.PortStats(p1).TxFrames.Load() == 0 {
		t.Fatal("port counters did not move")
	}

	// A small TCP transfer A -> B across the bridge, checked end to end.
	ln, err := gonet.ListenTCP(b, tcpip.FullAddress{NIC: 1, Addr: hostBIP, Port: 9}, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sum := make(chan [32]byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			sum <- [32]byte{}
			return
		}
		h := sha256.New()
		io.Copy(h, c)
		c.Close()
		var s [32]byte
		copy(s[:], h.Sum(nil))
		sum <- s
	}()
	data := make([]byte, 256<<10)
	rand.New(rand.NewSource(1)).Read(data)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := gonet.DialContextTCP(ctx, a, tcpip.FullAddress{NIC: 1, Addr: hostBIP, Port: 9}, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case s := <-sum:
		if s != sha256.Sum256(data) {
			t.Fatal("bridged TCP stream corrupted")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("bridged TCP transfer timed out")
	}

	// Cable pull on port 1.
	lan1.SetLink(false)
	if _, ok := br.Lookup(1, gnet.MAC{0x02, 0, 0, 0, 0, 0xb}); ok {
		t.Fatal("B still in the FDB after its port went down")
	}
	if err := nictest.Ping(a, hostBIP, []byte("gone"), 300*time.Millisecond); err == nil {
		t.Fatal("ping crossed a down port")
	}
	lan1.SetLink(true)
	if err := nictest.Ping(a, hostBIP, []byte("back"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
}
