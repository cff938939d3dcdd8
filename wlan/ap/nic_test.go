package ap_test

import (
	"bytes"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/wlan/ap"
)

type handler struct {
	got  [][]byte
	link []gnet.LinkState
	nic  gnet.NIC
	echo bool
}

func (h *handler) Receive(f []byte) {
	h.got = append(h.got, append([]byte(nil), f...))
	if h.echo {
		// Answer from inside Receive, as a bridge or stack may.
		r := append([]byte(nil), f...)
		copy(r[0:6], f[6:12])
		copy(r[6:12], f[0:6])
		if err := h.nic.Transmit(txBuf{r[:14], r[14:]}); err != nil {
			panic(err)
		}
	}
}
func (h *handler) LinkChanged(l gnet.LinkState) { h.link = append(h.link, l) }

type txBuf [][]byte

func (b txBuf) Segments() [][]byte { return b }
func (b txBuf) Len() int {
	n := 0
	for _, s := range b {
		n += len(s)
	}
	return n
}
func (b txBuf) Release() {}

// The AP as a gnet.NIC: station frames come out of the handler, and a
// handler may transmit back from inside Receive (no deadlock).
func TestNIC(t *testing.T) {
	b := newBSS(t, ap.Config{}, testPassphrase)
	b.m.Run(time.Second)
	nic := b.ap.NIC()
	h := &handler{nic: nic, echo: true}
	if err := nic.Start(h); err != nil {
		t.Fatal(err)
	}
	if len(h.link) != 1 || !h.link[0].Up {
		t.Fatalf("link %+v", h.link)
	}
	eth := ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)
	if err := b.stas[0].Send(eth); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	if len(h.got) != 1 || !bytes.Equal(h.got[0], eth) {
		t.Fatalf("handler got %x", h.got)
	}
	// The echo, with addresses swapped, reached the station.
	want := append([]byte(nil), eth...)
	copy(want[0:6], eth[6:12])
	copy(want[6:12], eth[0:6])
	if len(b.staRx[0]) != 1 || !bytes.Equal(b.staRx[0][0], want) {
		t.Fatalf("station got %x", b.staRx[0])
	}
	// Unknown unicast is dropped, not refused.
	if err := nic.Transmit(txBuf{ethICMP(staAddr(7), dsAddr, 1, 107, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	// The port follows the AP: down when it stops beaconing, up again
	// when it starts, once per change (a Reconfigure that restarts it
	// does not flap the link).
	b.ap.Stop()
	b.ap.Stop()
	if len(h.link) != 2 || h.link[1].Up {
		t.Fatalf("link after Stop %+v", h.link)
	}
	if err := b.ap.Start(b.apRadio, b.m.Now()); err != nil {
		t.Fatal(err)
	}
	if len(h.link) != 3 || !h.link[2].Up {
		t.Fatalf("link after Start %+v", h.link)
	}
	if b.ap.NIC() != nic {
		t.Fatal("NIC returned a second port")
	}
	nic.Stop()
	b.ap.Stop()
	if len(h.link) != 3 {
		t.Fatalf("link reported after the port stopped: %+v", h.link)
	}
	if err := nic.Transmit(txBuf{eth}); err != gnet.ErrLinkDown {
		t.Fatalf("after stop: %v", err)
	}
}
