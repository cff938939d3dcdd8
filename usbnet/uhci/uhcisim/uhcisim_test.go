package uhcisim

import (
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

type idleFn struct{ resets int }

func (f *idleFn) Speed() usb.Speed                    { return usb.SpeedLow }
func (f *idleFn) Reset()                              { f.resets++ }
func (*idleFn) Setup(uint8, [8]byte) usbsim.Handshake { return usbsim.NoResponse }
func (*idleFn) In(uint8, uint8, []byte) (int, uint8, usbsim.Handshake) {
	return 0, 0, usbsim.NoResponse
}
func (*idleFn) Out(uint8, uint8, uint8, []byte) usbsim.Handshake { return usbsim.NoResponse }

func rules(sys *hwsim.System) []string {
	var s []string
	for _, m := range sys.Misuses() {
		if m.Kind == hwsim.ModelRule {
			s = append(s, m.Detail)
		}
	}
	return s
}

// TestPorts: connect and its change bit, write-one-to-clear, a port
// reset that the device sees, the enable that only a connected port
// takes, and a reset shorter than 10 ms reported.
func TestPorts(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 1, NoPostedWrites: true, NoStaleReads: true})
	c := New(sys, nil, Config{})
	r := c.Map("uhci")
	f := &idleFn{}
	if v := r.Read16(rPORT1); v != pRes {
		t.Fatalf("empty port reads %#04x", v)
	}
	c.Plug(1, f)
	if v := r.Read16(rPORT1); v != pRes|pCCS|pCSC|pLSDA {
		t.Fatalf("after plug %#04x", v)
	}
	r.Write16(rPORT1, pCSC)
	r.Write16(rPORT1, pPR)
	time.Sleep(12 * time.Millisecond)
	r.Write16(rPORT1, 0)
	r.Write16(rPORT1, pPE)
	if v := r.Read16(rPORT1); v != pRes|pCCS|pLSDA|pPE || f.resets != 1 {
		t.Fatalf("after reset and enable %#04x, %d resets", v, f.resets)
	}
	if len(rules(sys)) != 0 {
		t.Fatalf("misuse: %v", rules(sys))
	}
	r.Write16(rPORT1, pPR)
	r.Write16(rPORT1, 0)
	if m := rules(sys); len(m) != 1 || !strings.Contains(m[0], "port reset held") {
		t.Fatalf("short reset not reported: %v", m)
	}
	r.Write16(rPORT2, pPE)
	if v := r.Read16(rPORT2); v&pPE != 0 {
		t.Fatalf("empty port enabled: %#04x", v)
	}
	r.Write16(rPORT1, pPE)
	c.Unplug(1)
	if v := r.Read16(rPORT1); v != pRes|pCSC|pPEC {
		t.Fatalf("after unplug %#04x", v)
	}
}

// TestHaltsOnBadTD: a TD with no valid PID is a process error: the
// controller halts, raises HCPE and the misuse names the TD.
func TestHaltsOnBadTD(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 1, NoPostedWrites: true, NoStaleReads: true})
	c := New(sys, nil, Config{})
	r := c.Map("uhci")
	fl, flPA, err := sys.Mem.AllocCoherent("fl", 4096, 4096, barrier.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	td, tdPA, err := sys.Mem.AllocCoherent("td", 16, 16, barrier.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	for i := uint32(0); i < 1024; i++ {
		fl.Write32(4*i, uint32(tdPA))
	}
	td.Write32(0, lT)
	td.Write32(4, tActive)
	td.Write32(8, 0) // no PID
	r.Write32(rFLBASE, uint32(flPA))
	r.Write16(rCMD, cmdRS)
	sys.Sched.Settle(100)
	if v := r.Read16(rSTS); v&(stsHCPE|stsHCH) != stsHCPE|stsHCH {
		t.Fatalf("status %#04x", v)
	}
	if m := rules(sys); len(m) != 1 || !strings.Contains(m[0], "no valid PID") {
		t.Fatalf("misuse %v", m)
	}
}
