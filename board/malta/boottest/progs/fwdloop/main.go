//go:build mips || mipsle

// Command fwdloop keeps frames circling through gowrt's bridge between
// QEMU malta's two pcnets, whose backends are ports of one QEMU hub (what
// one pcnet sends, the other receives), and measures each lap: the guest
// time (under QEMU -icount shift=0, instructions) between two arrivals of
// a marker frame. It is the test bed for the kernel's handling of the Go
// runtime's 64-bit atomic spinlock (kernel/atomiclock_mipsx.go): a thread
// descheduled inside it used to leave another spinning for a whole 10 ms
// time slice, a lap of ten million instructions.
//
// Set-up: both pcnets are ports of one bridge; the station X is learned
// on the LAN port (the WAN pcnet sends a frame from X, which the LAN
// pcnet receives; the bridge learns X there and drops the frame, which
// is for the port it came in on); then the LAN pcnet sends inFlight
// frames from S to X. The WAN pcnet receives each, the bridge forwards it
// to X on the LAN port, the LAN pcnet sends it, the WAN pcnet receives
// it again: one forwarded frame per lap and frame, for ever.
//
// After the frames given as the first argument (default 200000) it
// prints the laps' distribution, the longest lap and the kernel's
// counters for the lock, as "fwdloop: " lines, and exits.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/gowrt/gowrt/board/malta/eth"
	"github.com/gowrt/gowrt/kernel"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/netstack"
)

const (
	// inFlight is the number of frames circling: one lap of the marker
	// is inFlight forwarded frames (some 100 k instructions), far below
	// the 1 M a lap may take, far above a frame's cost, so the
	// interrupt batching of the drivers is exercised as well.
	inFlight = 8
	// frameLen is a minimum Ethernet frame (FCS excluded).
	frameLen = 60
	// defaultFrames is what the CI test asks for (issue 18).
	defaultFrames = 200_000
)

// Locally administered addresses of the two stations.
var (
	stationX = gnet.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a}
	stationS = gnet.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x05}
	brMAC    = gnet.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}
)

// lapBounds are the histogram's upper bounds (ns of guest time: under
// -icount shift=0, instructions); the last bucket is open.
var lapBounds = [...]int64{50_000, 100_000, 200_000, 500_000, 1_000_000, 5_000_000, 10_000_000}

// meter watches the WAN port's received frames on their way into the
// bridge. Receive runs on the NIC's one handler goroutine.
type meter struct {
	gnet.NIC
	h      gnet.Handler
	want   uint64
	frames uint64
	laps   uint64
	last   int64 // arrival of the marker
	maxLap int64
	hist   [len(lapBounds) + 1]uint64
	done   chan struct{}
}

func (m *meter) Start(h gnet.Handler) error { m.h = h; return m.NIC.Start(m) }

func (m *meter) LinkChanged(ls gnet.LinkState) { m.h.LinkChanged(ls) }

func (m *meter) Receive(f []byte) {
	if len(f) >= 15 && gnet.MAC(f[6:12]) == stationS && m.frames < m.want {
		m.frames++
		if f[14] == 0 { // the marker
			now := netstack.Nanotime()
			if m.last != 0 {
				lap := now - m.last
				m.laps++
				m.maxLap = max(m.maxLap, lap)
				i := 0
				for i < len(lapBounds) && lap > lapBounds[i] {
					i++
				}
				m.hist[i]++
			}
			m.last = now
		}
		if m.frames == m.want {
			close(m.done)
			return // the frame leaves the loop
		}
	}
	m.h.Receive(f)
}

// txFrame is a flat frame to transmit directly on a driver.
type txFrame struct{ b [][]byte }

func (t *txFrame) Segments() [][]byte { return t.b }
func (t *txFrame) Len() int           { return len(t.b[0]) }
func (t *txFrame) Release()           {}

func frame(dst, src gnet.MAC, seq byte) *txFrame {
	f := make([]byte, frameLen)
	copy(f[0:6], dst[:])
	copy(f[6:12], src[:])
	f[12], f[13] = 0x88, 0xb5 // IEEE 802 local experimental EtherType 1
	f[14] = seq
	return &txFrame{b: [][]byte{f}}
}

func fail(what string, err error) {
	fmt.Printf("fwdloop: FAIL %s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	want := uint64(defaultFrames)
	if len(os.Args) > 1 {
		n, err := strconv.ParseUint(os.Args[1], 10, 64)
		if err != nil {
			fail("frames", err)
		}
		want = n
	}
	lan, _, err := eth.LAN()
	if err != nil {
		fail("lan", err)
	}
	wan, _, err := eth.WAN()
	if err != nil {
		fail("wan", err)
	}
	br, err := bridge.New(bridge.Config{MAC: brMAC, Now: netstack.Nanotime})
	if err != nil {
		fail("bridge", err)
	}
	pa, err := br.AttachNIC(lan, bridge.DefaultVLANs)
	if err != nil {
		fail("attach lan", err)
	}
	m := &meter{NIC: wan, want: want, done: make(chan struct{})}
	if _, err := br.AttachNIC(m, bridge.DefaultVLANs); err != nil {
		fail("attach wan", err)
	}
	// Learn X on the LAN port.
	for try := 0; ; try++ {
		if p, ok := br.Lookup(1, stationX); ok && p == pa {
			break
		}
		if try == 1000 {
			fail("learn", fmt.Errorf("station %v not learned on the LAN port", stationX))
		}
		if err := wan.Transmit(frame(stationX, stationX, 0xff)); err != nil && try%100 == 99 {
			fmt.Printf("fwdloop: learn: %v\n", err)
		}
		runtime.Gosched()
		for i := 0; i < 1000; i++ {
			runtime.Gosched()
		}
	}
	in0, err := kernel.ReadInfo()
	if err != nil {
		fail("info", err)
	}
	for i := 0; i < inFlight; i++ {
		if err := lan.Transmit(frame(stationX, stationS, byte(i))); err != nil {
			fail("inject", err)
		}
	}
	<-m.done
	in, err := kernel.ReadInfo()
	if err != nil {
		fail("info", err)
	}
	fmt.Printf("fwdloop: frames=%d laps=%d in-flight=%d max-lap=%d instructions=%d\n",
		m.frames, m.laps, inFlight, m.maxLap, in.Uptime-in0.Uptime)
	fmt.Printf("fwdloop: laps")
	for i, n := range m.hist {
		if i < len(lapBounds) {
			fmt.Printf(" <=%d:%d", lapBounds[i], n)
		} else {
			fmt.Printf(" >%d:%d", lapBounds[i-1], n)
		}
	}
	fmt.Println()
	fmt.Printf("fwdloop: lock=%#x extends=%d overruns=%d spin-traps=%d switches=%d\n",
		in.AtomicLock, in.LockExtends-in0.LockExtends, in.LockOverruns-in0.LockOverruns,
		in.LockSpinTraps-in0.LockSpinTraps, in.Switches-in0.Switches)
	if in.LockSpinTraps != 0 {
		fmt.Printf("fwdloop: last spinner tid=%d in %s called from %s\n", in.LastSpinTid,
			funcName(in.LastSpinPC), funcName(in.LastSpinCaller))
	}
	if in.LockOverruns != 0 {
		fmt.Printf("fwdloop: last descheduled holder tid=%d at %s\n", in.LastHoldTid, funcName(in.LastHoldPC+4))
	}
	fmt.Println("fwdloop: done")
}

func funcName(pc uint32) string {
	if f := runtime.FuncForPC(uintptr(pc) - 4); f != nil {
		return fmt.Sprintf("%s (%#x)", f.Name(), pc)
	}
	return fmt.Sprintf("%#x", pc)
}
