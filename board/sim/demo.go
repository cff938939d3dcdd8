package sim

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/netstack"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// DemoAddr is the demo host's address on the LAN when there are no TAP
// devices (no root): it stands where a PC would be plugged in.
var DemoAddr = [4]byte{192, 168, 1, 100}

// wireNIC is the demo host's network card: the other end of a MAC model's
// cable, inside the process instead of a TAP device. Like a real NIC it
// receives into a ring of its own buffers and lends each frame to its
// handler; a goroutine does the delivering, because the MAC model sends
// with the System lock held.
type wireNIC struct {
	p    *Port
	mu   sync.Mutex
	h    gnet.Handler
	rx   chan []byte // received frames, in ring buffers
	free chan []byte // ring buffers to receive into
	stop chan struct{}
	done chan struct{}

	txMu sync.Mutex
	flat [gnet.RxBufSize]byte // a frame to send, gathered (txMu)
}

// demoRing is the demo NIC's receive ring size.
const demoRing = 64

func newWireNIC(p *Port) *wireNIC {
	w := &wireNIC{p: p, rx: make(chan []byte, demoRing), free: make(chan []byte, demoRing),
		stop: make(chan struct{}), done: make(chan struct{})}
	for range demoRing {
		w.free <- make([]byte, gnet.RxBufSize)
	}
	return w
}

func (w *wireNIC) MACAddress() gnet.MAC            { return gnet.MAC{0x02, 0xde, 0x40, 0, 0, 0x64} }
func (w *wireNIC) MTU() int                        { return gnet.DefaultMTU }
func (w *wireNIC) Capabilities() gnet.Capabilities { return 0 }
func (w *wireNIC) Link() gnet.LinkState {
	return gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}
}

func (w *wireNIC) Start(h gnet.Handler) error {
	w.mu.Lock()
	w.h = h
	w.mu.Unlock()
	h.LinkChanged(w.Link())
	go w.deliver(h)
	return nil
}

// Stop ends delivery.
func (w *wireNIC) Stop() {
	w.mu.Lock()
	started := w.h != nil
	w.h = nil
	w.mu.Unlock()
	if started {
		close(w.stop)
		<-w.done
	}
}

// deliver lends received frames to h, one at a time, and recycles their
// buffers once Receive has returned.
func (w *wireNIC) deliver(h gnet.Handler) {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case f := <-w.rx:
			h.Receive(f)
			w.free <- f[:cap(f)]
		}
	}
}

// Transmit puts the frame on the cable into the MAC model.
func (w *wireNIC) Transmit(b gnet.TxBuf) error {
	if b.Len() > len(w.flat) {
		return fmt.Errorf("sim: demo host: frame of %d bytes", b.Len())
	}
	w.txMu.Lock()
	n := 0
	for _, s := range b.Segments() {
		n += copy(w.flat[n:], s)
	}
	b.Release()
	w.p.deliver(w.flat[:n]) // the MAC model copies it into its FIFO
	w.txMu.Unlock()
	return nil
}

// fromMAC receives a frame the MAC model sent (System lock held) into a
// free ring buffer for the delivering goroutine; with none free, the ring
// is full and the frame is dropped.
func (w *wireNIC) fromMAC(frame []byte) {
	select {
	case buf := <-w.free:
		w.rx <- buf[:copy(buf, frame)]
	default:
	}
}

// startDemo builds the demo host's stack on the port's cable and, once the
// router answers, pings it and fetches its status page, logging both.
func (b *Board) startDemo(p *Port) error {
	w := newWireNIC(p)
	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, arp.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, icmp.NewProtocol4},
	})
	ep, err := netstack.NewEndpoint(w)
	if err != nil {
		return err
	}
	if e := netstack.CreateNIC(s, 1, ep); e != nil {
		return fmt.Errorf("sim: demo host: %v", e)
	}
	if err := ep.BindStack(s, 1); err != nil {
		return err
	}
	if e := s.AddProtocolAddress(1, tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4(DemoAddr), PrefixLen: 24}},
		stack.AddressProperties{}); e != nil {
		return fmt.Errorf("sim: demo host: %v", e)
	}
	s.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, NIC: 1}})
	p.demo = w
	go b.demo(s)
	return nil
}

func (b *Board) demo(s *stack.Stack) {
	router := tcpip.FullAddress{NIC: 1, Addr: tcpip.AddrFrom4([4]byte{192, 168, 1, 1}), Port: 80}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := gonet.DialContextTCP(ctx, s, router, ipv4.ProtocolNumber)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	}}
	for try := 0; try < 60; try++ {
		start := time.Now()
		resp, err := client.Get("http://192.168.1.1/")
		if err != nil {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.cfg.Log("sim: demo host %d.%d.%d.%d fetched http://192.168.1.1/ through the simulated LAN port: %s, %d bytes in %v",
			DemoAddr[0], DemoAddr[1], DemoAddr[2], DemoAddr[3], resp.Status, len(body), time.Since(start).Round(time.Millisecond))
		return
	}
	b.cfg.Log("sim: demo host: the router's status page never answered")
}
