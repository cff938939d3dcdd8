package pcnet

import (
	"bytes"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/netstack"
	"github.com/gowrt/gowrt/net/nictest"
)

// TestCopiesPerFrame counts the copies a frame received by pcnet costs on
// its way to the router's gVisor stack through br-lan, wired as
// net/router wires them on QEMU malta: the driver lends the bridge its
// ring buffer (no copy), the bridge copies the frame once, and gVisor
// parses that copy in place. A broadcast is the same one copy for the
// stack and for another bridge port.
func TestCopiesPerFrame(t *testing.T) {
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
	var lan *nictest.Spy
	r := newRigStart(t, 2, true, wrong{}, hwsim.ControllerConfig{Name: "i8259", Lines: 16}, func(n *NIC) error {
		lan = &nictest.Spy{NIC: n}
		_, err := br.AttachNIC(lan, bridge.DefaultVLANs)
		return err
	}, func(c *Config) { c.Promiscuous = true })
	other, _ := nictest.Pair(nictest.Config{MAC: gnet.MAC{0x02, 0xbb, 0, 0, 0, 2}}, nictest.Config{MAC: gnet.MAC{0x02, 0, 0, 0, 0, 9}})
	out := &nictest.Spy{NIC: other}
	if _, err := br.AttachNIC(out, bridge.DefaultVLANs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Stop)
	inRing := func(f []byte) bool {
		for _, s := range r.nic.rx {
			if &f[0] == &s.buf[rxAlign] {
				return true
			}
		}
		return false
	}
	stA := gnet.MAC{0x02, 0, 0, 0, 0, 0xa}

	for i, dst := range []gnet.MAC{brMAC, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}} {
		f := frame(i, 200)
		copy(f, dst[:])
		copy(f[6:], stA[:])
		f[14], f[20], f[21] = 0x45, 0, 0 // IPv4, no options, not a fragment
		r.chip.Deliver(f)
		deadline := time.Now().Add(5 * time.Second)
		for {
			if mem, _ := stack.Packets(); len(mem) == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("frame %d never reached the stack", i)
			}
			time.Sleep(time.Millisecond)
		}
		lent, kept := lan.Lent(), host.Kept()
		mem, frames := stack.Packets()
		switch {
		case len(lent) != i+1 || !inRing(lent[i]):
			t.Fatalf("frame %d: the driver did not lend its ring buffer", i)
		case len(kept) != i+1 || inRing(kept[i]):
			t.Fatalf("frame %d: the host port was not handed the bridge's copy", i)
		case !bytes.Equal(frames[i], f):
			t.Fatalf("frame %d: the stack got another frame", i)
		}
		if i == 0 && &mem[0][0] != &kept[0][0] {
			t.Fatal("gVisor parses a copy of the bridge's buffer: a second copy")
		}
		if i == 1 {
			if sent := out.Sent(); len(sent) != 1 || &sent[0][0] != &kept[1][0] {
				t.Fatal("the other port does not transmit the broadcast from the host port's buffer")
			}
		}
	}
}
