//go:build mips || mipsle

// Command pcnettest brings up QEMU malta's on-board pcnet NIC on the
// bare-metal kernel: PCI enumeration and BAR assignment, bus mastering, the
// pcnet driver on DMA memory from the kernel (busdma/mipsdma), its
// interrupt through the i8259 (all through board/malta/eth), and gVisor's
// stack on top through the gowrt net adapter. With QEMU user networking (slirp: the firmware is 10.0.2.15,
// the host is reachable as 10.0.2.2) it prints "LAN up", then, given
// "echo:PORT:BYTES" on the command line, connects to 10.0.2.2:PORT, sends
// BYTES pseudo-random bytes, reads them back and prints their SHA-256 and
// the time taken.
package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gowrt/gowrt/board/malta/eth"
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

func fail(what string, err error) {
	fmt.Printf("pcnettest: FAIL %s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	start := time.Now()
	nic, dev, err := eth.LAN()
	if err != nil {
		fail("lan", err)
	}
	fmt.Printf("pcnet: %v %s %v irq %d\n", dev.Addr, nic.PartName(), nic.MACAddress(), dev.IRQ)

	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, arp.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, icmp.NewProtocol4},
	})
	ep, err := netstack.NewEndpoint(nic)
	if err != nil {
		fail("endpoint", err)
	}
	if e := netstack.CreateNIC(s, 1, ep); e != nil {
		fail("CreateNIC", fmt.Errorf("%v", e))
	}
	if err := ep.BindStack(s, 1); err != nil {
		fail("bind", err)
	}
	addr := tcpip.AddrFrom4([4]byte{10, 0, 2, 15})
	if e := s.AddProtocolAddress(1, tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: addr, PrefixLen: 24}}, stack.AddressProperties{}); e != nil {
		fail("address", fmt.Errorf("%v", e))
	}
	gw := tcpip.AddrFrom4([4]byte{10, 0, 2, 2})
	s.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, Gateway: gw, NIC: 1}})
	for i := 0; i < 200 && !ep.LinkUp(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !ep.LinkUp() {
		fail("link", fmt.Errorf("link down: %+v", nic.Link()))
	}
	fmt.Printf("LAN up: 10.0.2.15 %v after %d ms in main\n", nic.MACAddress(), time.Since(start).Milliseconds())

	for _, a := range os.Args[1:] {
		f := strings.Split(a, ":")
		if len(f) != 3 || f[0] != "echo" {
			continue
		}
		port, _ := strconv.Atoi(f[1])
		n, _ := strconv.Atoi(f[2])
		echo(s, gw, uint16(port), n)
	}
	st := &nic.Stats
	fmt.Printf("pcnet: rx %d frames, tx %d, rx errors %d, tx errors %d, missed %d, tx full %d, interrupts %d\n",
		st.RxFrames.Load(), st.TxFrames.Load(), st.RxErrors.Load(), st.TxErrors.Load(), st.Missed.Load(), st.TxFull.Load(), st.Interrupts.Load())
	nic.Stop()
	fmt.Println("pcnettest: ok")
}

// echo sends n bytes to dst:port and reads them back concurrently.
func echo(s *stack.Stack, dst tcpip.Address, port uint16, n int) {
	c, err := gonet.DialTCP(s, tcpip.FullAddress{NIC: 1, Addr: dst, Port: port}, ipv4.ProtocolNumber)
	if err != nil {
		fail("dial", err)
	}
	defer c.Close()
	data := make([]byte, n)
	r := rand.NewChaCha8([32]byte{'g', 'o', 'w', 'r', 't'})
	_, _ = r.Read(data)
	sum := sha256.Sum256(data)
	t0 := time.Now()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(data)
		errc <- err
	}()
	got := make([]byte, n)
	if _, err := io.ReadFull(c, got); err != nil {
		fail("read back", err)
	}
	if err := <-errc; err != nil {
		fail("write", err)
	}
	d := time.Since(t0)
	back := sha256.Sum256(got)
	fmt.Printf("echo: %d bytes sent %x received %x in %d ms (%.1f Mbit/s each way)\n",
		n, sum[:8], back[:8], d.Milliseconds(), float64(n)*8/d.Seconds()/1e6)
	if back != sum {
		fail("echo", fmt.Errorf("checksum mismatch"))
	}
}
