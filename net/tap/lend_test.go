//go:build linux && !mips && !mipsle

package tap

import (
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/netns"
	gnet "github.com/gowrt/gowrt/net"
)

// lendRecorder records where the frames lent to it lie.
type lendRecorder struct {
	mu   sync.Mutex
	lent []*byte
}

func (h *lendRecorder) Receive(f []byte) {
	h.mu.Lock()
	h.lent = append(h.lent, &f[0])
	h.mu.Unlock()
}
func (*lendRecorder) LinkChanged(gnet.LinkState) {}

// TestReceiveLendsBuffer: the frames the NIC delivers are its receive
// buffer itself, which the device read wrote: the NIC copies nothing.
func TestReceiveLendsBuffer(t *testing.T) {
	ns := netns.New(t)
	dev, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	n := NewNIC(dev, gnet.MAC{0x02, 0x67, 0x77, 0x72, 0x74, 0x02})
	h := &lendRecorder{}
	if err := n.Start(h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	ns.Adopt(t, dev.Name(), "10.78.0.2/24")
	// Nobody answers: Linux broadcasts ARP requests for 10.78.0.1.
	_, _ = ns.Exec(10*time.Second, "ping", "-c", "2", "-i", "0.2", "-W", "1", "10.78.0.1")
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lent) == 0 {
		t.Fatal("no frame received")
	}
	for i, p := range h.lent {
		if p != &n.rxBuf[0] {
			t.Fatalf("frame %d is not the NIC's receive buffer", i)
		}
	}
}
