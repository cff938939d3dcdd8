package ar9300

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/wlan/radio"
)

type holdAlways struct{}

func (holdAlways) Hold() error    { return nil }
func (holdAlways) Release() error { return nil }

type nopRecv struct{}

func (nopRecv) Receive([]byte, *radio.RxStatus) {}

type nopDev struct{}

func (nopDev) ReadReg(uint32, int) uint32   { return 0 }
func (nopDev) WriteReg(uint32, int, uint32) {}

// TestDescriptorLayout checks the words of an A-MPDU's two descriptors
// field by field against the ar9003_txc layout (ar9300desc.h,
// ar9003_mac.c ar9003_set_txdesc), as written for a two-MPDU aggregate
// on the BE queue with CCMP in key slot 5 and the schedule MCS 7 x2, MCS 6
// x3 (HT40, short GI on the first series).
func TestDescriptorLayout(t *testing.T) {
	sys := hwsim.New(hwsim.Config{Seed: 1, BigEndianCPU: cpuBigEndian, AgentRate: -1})
	regs := sys.Bus.Map("regs", 0x10000, nopDev{})
	d, err := New(Config{Regs: regs, DMA: sys.Mem, Power: holdAlways{}, TxDescs: 4, RxBufs: 1, RxHPBufs: 1,
		RxBufSize: 256, Delay: func(time.Duration) {}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(nopRecv{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Install(5, [6]byte{2, 0, 0, 0, 0, 2}, 0, [16]byte{1}, 1); err != nil {
		t.Fatal(err)
	}
	m0 := make([]byte, 100)
	m1 := make([]byte, 60)
	for _, m := range [][]byte{m0, m1} {
		m[0], m[1] = 0x88, 0x42 // QoS data, FromDS, protected
	}
	req := &radio.TxRequest{MPDUs: [][]byte{m0, m1}, Key: 5, Queue: 0,
		Series: [radio.MaxSeries]radio.Series{{Rate: airtime.MCS(7, true, true), Tries: 2}, {Rate: airtime.MCS(6, false, false), Tries: 3}},
		Done:   func(*radio.TxRequest, *radio.TxStatus) {}}
	if err := d.Transmit(req); err != nil {
		t.Fatal(err)
	}
	q := &d.ac[0]
	word := func(desc, i int) uint32 { return native.Uint32(d.desc(q.base + desc)[4*i:]) }
	id := uint32(d.nextID)
	addr0, addr1 := q.maps[0].Segments()[0].Addr, q.maps[1].Segments()[0].Addr
	const aggLen = 104 + 64
	want := [2][24]uint32{{
		0: 0x168c<<16 | 1<<15 | 1<<14 | 1<<8 | 0x17, // DescId, TxRxDesc, CtrlStat, QCU 1 (BE), 23 words
		1: d.descAddr(q.base + 1),                   // link to the next MPDU's descriptor
		2: uint32(addr0), 3: 100 << 16,              // buffer 0 and AR_BufLen
		11: 104 | 0x01000000 | 0x40000000,   // FrameLen with FCS, ClrDestMask, DestIdxValid
		12: 5<<13 | 0x40000000 | 0x20000000, // DestIdx 5, IsAggr, MoreAggr
		13: 2<<16 | 3<<20,                   // tries per series
		14: 0x87 | 0x86<<8,                  // rate codes MCS 7, MCS 6
		17: 2<<26 | aggLen,                  // EncrType AES, AggrLen
		18: 0x1 | 0x2,                       // series 0: AR_2040_0, AR_GI0
		19: 0x20000000,                      // AR_Not_Sounding
	}, {
		0: 0x168c<<16 | 1<<15 | 1<<14 | 1<<8 | 0x17,
		2: uint32(addr1), 3: 60 << 16,
		11: 64 | 0x01000000 | 0x40000000 | 0x20000000, // ... and TxIntrReq on the last
		12: 5<<13 | 0x40000000,                        // IsAggr, no MoreAggr: the last subframe
		13: 2<<16 | 3<<20,
		14: 0x87 | 0x86<<8,
		17: 2 << 26,
		18: 0x1 | 0x2,
		19: 0x20000000,
	}}
	for n := range want {
		w := want[n]
		var sum uint32
		for i := 0; i < 10; i++ {
			sum += w[i]
		}
		w[10] = id<<16 | (sum&0xffff+sum>>16)&0xffff // TxDescId, pointer checksum
		for i := 0; i < txDescWords; i++ {
			if got := word(n, i); got != w[i] {
				t.Errorf("descriptor %d word %d: %#08x, want %#08x", n, i, got, w[i])
			}
		}
	}
	// The CCMP headers: PN 1 and 2, key ID 0, Ext IV.
	for i, m := range [][]byte{m0, m1} {
		if h := m[26:34]; h[0] != byte(i+1) || h[3] != 0x20 || h[1]|h[4]|h[5]|h[6]|h[7] != 0 {
			t.Errorf("MPDU %d CCMP header % x", i, h)
		}
	}
}
