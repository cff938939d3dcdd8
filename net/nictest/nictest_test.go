package nictest_test

import (
	"bytes"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nictest"
)

type recorder struct {
	got chan []byte
	mem chan *byte
}

func (r *recorder) Receive(f []byte) {
	r.mem <- &f[0]
	r.got <- append([]byte(nil), f...)
}
func (*recorder) LinkChanged(gnet.LinkState) {}

type txBytes []byte

func (f txBytes) Segments() [][]byte { return [][]byte{f[:14], f[14:]} }
func (f txBytes) Len() int           { return len(f) }
func (f txBytes) Release()           {}

// TestFramesLentFromReceiveBuffer: injected and transmitted frames reach
// the handler as slices of the receiving NIC's buffer, as from a driver's
// ring, with the bytes that were sent.
func TestFramesLentFromReceiveBuffer(t *testing.T) {
	a, b := nictest.Pair(nictest.Config{MAC: gnet.MAC{2, 0, 0, 0, 0, 1}, Caps: gnet.CapScatterGather},
		nictest.Config{MAC: gnet.MAC{2, 0, 0, 0, 0, 2}})
	ra, rb := &recorder{make(chan []byte, 4), make(chan *byte, 4)}, &recorder{make(chan []byte, 4), make(chan *byte, 4)}
	if err := a.Start(ra); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(rb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(); b.Stop() })
	f := bytes.Repeat([]byte{0x5a}, 64)
	a.Inject(f)
	if <-ra.mem != &a.RxBuffer()[0] || !bytes.Equal(<-ra.got, f) {
		t.Fatal("injected frame not lent from the NIC's receive buffer")
	}
	if err := a.Transmit(txBytes(f)); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-rb.mem:
		if p != &b.RxBuffer()[0] || !bytes.Equal(<-rb.got, f) {
			t.Fatal("carried frame not lent from the peer's receive buffer")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("frame not carried")
	}
}
