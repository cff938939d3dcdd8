//go:build linux && !mips && !mipsle

package sim

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/internal/netns"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/netstack"
	"github.com/gowrt/gowrt/net/nictest"
)

// TestCopiesPerFrame counts the copies a received frame costs in sim mode
// on the router's receive paths, wired as net/router wires them: the arge
// driver (against its MAC model) into br-lan and on to the router's gVisor
// stack, and from one LAN port out of another.
//
//   - The arge driver lends the bridge its DMA receive buffer: the frame
//     the bridge's handler gets lies in the driver's RX buffer allocation.
//   - The bridge copies it once. A frame for the router reaches gVisor in
//     the buffer the host port handed over, which gVisor parses in place:
//     one copy from the receive ring to the stack.
//   - A forwarded frame leaves from the bridge's copy, which the egress
//     arge driver transmits without a bounce buffer: one copy from one
//     wire to the other. A broadcast is the same one copy for the egress
//     port and the host port.
func TestCopiesPerFrame(t *testing.T) {
	netns.RequireRoot(t)
	b := New(Config{Seed: 5, Log: t.Logf, Ports: []PortConfig{
		{Name: "lan1", Role: board.LAN, TAP: fmt.Sprintf("gwc%d-0", os.Getpid()), MAC: gnet.MAC{2, 0, 0x67, 0x77, 0x72, 0x20}},
		{Name: "lan2", Role: board.LAN, TAP: fmt.Sprintf("gwc%d-1", os.Getpid()), MAC: gnet.MAC{2, 0, 0x67, 0x77, 0x72, 0x21}},
	}})
	t.Cleanup(func() { _ = b.Close() })
	if _, err := b.Ports(); err != nil {
		t.Fatal(err)
	}
	brMAC := gnet.MAC{0x02, 0xbb, 0, 0, 0, 1}
	br, err := bridge.New(bridge.Config{MAC: brMAC, Now: netstack.Nanotime})
	if err != nil {
		t.Fatal(err)
	}
	hn, err := br.AddHostPort(bridge.DefaultVLANs)
	if err != nil {
		t.Fatal(err)
	}
	host := &nictest.Spy{NIC: hn}
	ep, err := netstack.NewEndpoint(host)
	if err != nil {
		t.Fatal(err)
	}
	var stack nictest.Dispatcher
	ep.Attach(&stack)
	t.Cleanup(ep.Close)
	var lan [2]*nictest.Spy
	for i, p := range b.ports {
		lan[i] = &nictest.Spy{NIC: p.NIC}
		if _, err := br.AttachNIC(lan[i], bridge.DefaultVLANs); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.NIC.Stop) // before the board's Close
	}
	waitFor(t, "links up", func() bool { return lan[0].LinkUp() && lan[1].LinkUp() })
	inDMA := func(f []byte) bool {
		name, ok := b.sys.Mem.Allocation(f)
		return ok && strings.HasSuffix(name, "-rxbufs")
	}
	stA, stB := gnet.MAC{0x02, 0, 0, 0, 0, 0xa}, gnet.MAC{0x02, 0, 0, 0, 0, 0xb}
	bcast := gnet.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

	// A -> router, on lan1.
	f := ipv4Frame(brMAC, stA, 100)
	b.ports[0].deliver(f)
	waitFor(t, "the frame at the stack", func() bool { mem, _ := stack.Packets(); return len(mem) == 1 })
	lent, kept := lan[0].Lent(), host.Kept()
	mem, frames := stack.Packets()
	switch {
	case len(lent) != 1 || !inDMA(lent[0]):
		t.Fatalf("lan1's driver lent %d frames, not in its DMA receive buffers: it copied", len(lent))
	case len(kept) != 1 || inDMA(kept[0]):
		t.Fatal("the bridge did not hand the host port a copy of its own")
	case &mem[0][0] != &kept[0][0]:
		t.Fatal("gVisor parses a copy of the bridge's buffer: a second copy")
	case !bytes.Equal(frames[0], f):
		t.Fatal("the stack got another frame")
	}

	// A broadcast from B on lan2 (which also teaches the bridge where B
	// is): the host port and lan1 get the one copy.
	g := ipv4Frame(bcast, stB, 100)
	b.ports[1].deliver(g)
	waitFor(t, "the broadcast at the stack and on lan1", func() bool {
		mem, _ := stack.Packets()
		return len(mem) == 2 && len(lan[0].Sent()) == 1
	})
	kept, sent := host.Kept(), lan[0].Sent()
	if inDMA(sent[0]) || &sent[0][0] != &kept[1][0] {
		t.Fatal("lan1 transmits the broadcast from other memory than the host port got: more than one copy")
	}
	mem, _ = stack.Packets()
	t.Logf("broadcast parsed by gVisor in the bridge's copy: %v (a copy-on-write copy if lan1 was still transmitting it)",
		&mem[1][0] == &kept[1][0])

	// A -> B, lan1 to lan2: the bridge's one copy, transmitted as it is.
	u := ipv4Frame(stB, stA, 1000)
	b.ports[0].deliver(u)
	waitFor(t, "the unicast on lan2", func() bool { return len(lan[1].Sent()) == 1 })
	lent, sent = lan[0].Lent(), lan[1].Sent()
	if !inDMA(lent[len(lent)-1]) || inDMA(sent[0]) {
		t.Fatal("lan1's driver copied, or lan2 was given lan1's DMA buffer")
	}
	drv := b.ports[1].NIC.Driver()
	waitFor(t, "lan2's transmission", func() bool { return drv.Stats.TxFrames.Load() >= 1 })
	if st := &drv.Stats; st.TxBounced.Load() != 0 {
		t.Fatalf("lan2's driver bounced %d transmit buffers: a second copy", st.TxBounced.Load())
	}
	if mem, _ := stack.Packets(); len(mem) != 2 {
		t.Fatalf("the stack got %d frames, want 2 (A -> B is not for it)", len(mem))
	}
}

// ipv4Frame is a frame with an IPv4 header (no options) and n bytes in all
// after the Ethernet header.
func ipv4Frame(dst, src gnet.MAC, n int) []byte {
	f := make([]byte, 14+n)
	copy(f, dst[:])
	copy(f[6:], src[:])
	f[12], f[13] = 0x08, 0x00
	f[14] = 0x45
	for i := 34; i < len(f); i++ {
		f[i] = byte(i)
	}
	return f
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
