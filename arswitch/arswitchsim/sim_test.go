package arswitchsim_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/arswitch/arswitchsim"
	"github.com/gowrt/gowrt/mdio"
)

func attach(tb testing.TB, c arswitchsim.Chip) (*arswitchsim.Switch, *arswitch.Switch) {
	tb.Helper()
	m := arswitchsim.New(c, arswitchsim.Options{})
	sw, err := arswitch.Attach(arswitch.Config{Bus: m, BuiltIn: c == arswitchsim.AR7240 || c == arswitchsim.AR934x,
		Sleep: m.Clock().Sleep})
	if err != nil {
		tb.Fatal(err)
	}
	for p := 1; p < m.NumPorts(); p++ {
		m.SetLink(p, true)
	}
	return m, sw
}

func eth(dst, src byte, vid int, n int) []byte {
	b := make([]byte, 0, n+4)
	if dst == 0xff {
		b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	} else {
		b = append(b, 2, 0, 0, 0, 0, dst)
	}
	b = append(b, 2, 0, 0, 0, 0, src)
	if vid >= 0 {
		b = binary.BigEndian.AppendUint16(b, 0x8100)
		b = binary.BigEndian.AppendUint16(b, uint16(vid))
	}
	b = binary.BigEndian.AppendUint16(b, 0x0800)
	for len(b) < n {
		b = append(b, byte(len(b)))
	}
	return b
}

// lanWAN sets the classic split with a tagged CPU port.
func lanWAN(tb testing.TB, sw *arswitch.Switch) {
	tb.Helper()
	for _, err := range []error{
		sw.SetVLANMode(arswitch.ModeDot1Q),
		sw.SetVLANGroup(0, arswitch.VLANGroup{VID: 1, Members: arswitch.Ports(0, 1, 2, 3, 4), Untagged: arswitch.Ports(1, 2, 3, 4)}),
		sw.SetVLANGroup(1, arswitch.VLANGroup{VID: 2, Members: arswitch.Ports(0, 5), Untagged: arswitch.Ports(5)}),
		sw.SetPort(5, arswitch.PortConfig{PVID: 2, Flags: arswitch.FlagIngressFilter}),
	} {
		if err != nil {
			tb.Fatal(err)
		}
	}
}

type counter struct{ n, bytes int }

func (c *counter) fn(f []byte) { c.n++; c.bytes += len(f) }

// TestInjectAllocatesNothing: the per-frame path must not allocate, so the
// model can sit in throughput tests.
func TestInjectAllocatesNothing(t *testing.T) {
	for _, c := range []arswitchsim.Chip{arswitchsim.AR8316, arswitchsim.AR8327} {
		m, sw := attach(t, c)
		lanWAN(t, sw)
		var cnt counter
		for p := 0; p < m.NumPorts(); p++ {
			m.SetEgress(p, cnt.fn)
		}
		m.Inject(2, eth(0xff, 2, -1, 64))
		uc, bc, tagged, leak := eth(2, 1, -1, 1514), eth(0xff, 1, -1, 64), eth(2, 9, 1, 1514), eth(0xff, 1, 2, 64)
		for name, f := range map[string]func(){
			"known unicast": func() { m.Inject(1, uc) },
			"flood":         func() { m.Inject(1, bc) },
			"tag stripped":  func() { m.Inject(0, tagged) },
			"dropped":       func() { m.Inject(1, leak) },
		} {
			if a := testing.AllocsPerRun(100, f); a != 0 {
				t.Errorf("%v %s: %v allocs per frame", c, name, a)
			}
		}
		if cnt.n == 0 {
			t.Fatal("nothing forwarded")
		}
	}
}

func TestMDIOAddressChecked(t *testing.T) {
	m := arswitchsim.New(arswitchsim.AR8327, arswitchsim.Options{})
	if _, err := m.Read(32, 0); !errors.Is(err, mdio.ErrAddress) {
		t.Errorf("Read(32,0): %v", err)
	}
	if err := m.Write(0, 32, 0); !errors.Is(err, mdio.ErrAddress) {
		t.Errorf("Write(0,32): %v", err)
	}
	if v, _ := m.Read(0x19, 0); v != 0xffff {
		t.Errorf("empty address read %#x", v)
	}
}

// TestModelChecks: the register-level rules fire on the things they
// describe (start while busy, access during reset, split half-writes).
func TestModelChecks(t *testing.T) {
	m := arswitchsim.New(arswitchsim.AR8316, arswitchsim.Options{})
	m.Poke(0x050, 1|1<<3) // ATU flush, busy for a while
	m.Poke(0x050, 1|1<<3) // again while busy: ignored
	if len(m.Violations()) != 1 {
		t.Fatalf("start while busy: %v", m.Violations())
	}
	m.ClearViolations()
	m.Poke(0x000, 1<<31) // soft reset
	m.Poke(0x070, 1)
	if len(m.Violations()) != 1 {
		t.Fatalf("write during reset: %v", m.Violations())
	}
	m.Clock().Sleep(2 * time.Millisecond)
	m.ClearViolations()
	m.Poke(0x104, 5) // invalid port state
	m.Poke(0x078, 1) // undefined CPU_PORT bit
	if len(m.Violations()) != 2 {
		t.Fatalf("field checks: %v", m.Violations())
	}
}

// TestAgingAndStatic: dynamic entries age out under the ATU_CTRL age time;
// static entries loaded through the ATU stay.
func TestAgingAndStatic(t *testing.T) {
	m, _ := attach(t, arswitchsim.AR8316)
	var cnt [8]counter
	for p := 0; p < m.NumPorts(); p++ {
		m.SetEgress(p, cnt[p].fn)
	}
	m.Inject(1, eth(0xff, 1, -1, 64))
	// Static entry for host 3 on port 3, loaded with raw register writes.
	m.Poke(0x054, 0x02000000)            // MAC bytes 0-3: 02:00:00:00
	m.Poke(0x058, 1<<3|0xf<<16)          // port 3, static
	m.Poke(0x050, 0x00<<24|0x03<<16|2|8) // bytes 4-5 00:03, LOAD, ACTIVE
	m.Clock().Sleep(time.Millisecond)
	cnt = [8]counter{}
	m.Inject(2, eth(1, 2, -1, 64))
	m.Inject(2, eth(3, 2, -1, 64))
	if cnt[1].n != 1 || cnt[3].n != 1 || cnt[4].n != 0 {
		t.Fatalf("before aging: %+v", cnt)
	}
	m.Advance(10 * time.Minute)
	cnt = [8]counter{}
	m.Inject(4, eth(1, 4, -1, 64))
	m.Inject(4, eth(3, 4, -1, 64))
	if cnt[2].n != 1 || cnt[3].n != 2 {
		t.Fatalf("after aging host 1 floods, static host 3 does not: %+v", cnt)
	}
	if n := len(m.ATU()); n != 2 { // static host 3, fresh host 4
		t.Fatalf("ATU after aging: %+v", m.ATU())
	}
}

// FuzzInject feeds arbitrary frames to each chip in 802.1Q mode: the model
// must not panic, and every frame leaving differs from the input by at most
// one tag.
func FuzzInject(f *testing.F) {
	f.Add(uint8(1), eth(0xff, 1, -1, 64))
	f.Add(uint8(0), eth(2, 9, 1, 64))
	f.Add(uint8(5), eth(3, 9, 0, 18))
	f.Add(uint8(2), []byte{0x81, 0})
	models := map[arswitchsim.Chip]*arswitchsim.Switch{}
	for _, c := range []arswitchsim.Chip{arswitchsim.AR8316, arswitchsim.AR8327} {
		m, sw := attach(f, c)
		lanWAN(f, sw)
		models[c] = m
	}
	f.Fuzz(func(t *testing.T, port uint8, frame []byte) {
		for _, m := range models {
			in := len(frame)
			bad := false
			for p := 0; p < m.NumPorts(); p++ {
				m.SetEgress(p, func(out []byte) {
					if d := len(out) - in; d != 0 && d != 4 && d != -4 {
						bad = true
					}
				})
			}
			m.Inject(int(port%9)-1, frame)
			if bad {
				t.Fatalf("%v: output length changed by more than a tag", m.Chip())
			}
		}
	})
}

// Benchmarks of the model's per-frame path against a same-run baseline
// (copying the frame once, the least any switch model must do).
func benchInject(b *testing.B, c arswitchsim.Chip, in int, frame []byte) {
	m, sw := attach(b, c)
	lanWAN(b, sw)
	var cnt counter
	for p := 0; p < m.NumPorts(); p++ {
		m.SetEgress(p, cnt.fn)
	}
	m.Inject(2, eth(0xff, 2, -1, 64)) // learn host 2
	m.Inject(0, eth(0xff, 9, 1, 64))  // learn the CPU
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Inject(in, frame)
	}
	if cnt.n == 0 {
		b.Fatal("nothing forwarded")
	}
}

func BenchmarkBaselineCopy(b *testing.B) {
	frame := eth(2, 1, -1, 1514)
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = append(buf[:0], frame...)
	}
	_ = buf
}

func BenchmarkInject(b *testing.B) {
	for _, c := range []arswitchsim.Chip{arswitchsim.AR8316, arswitchsim.AR8327} {
		b.Run(c.String()+"/unicast-tagadd-1514", func(b *testing.B) { benchInject(b, c, 2, eth(9, 2, -1, 1514)) })
		b.Run(c.String()+"/unicast-untag-1514", func(b *testing.B) { benchInject(b, c, 0, eth(2, 9, 1, 1514)) })
		b.Run(c.String()+"/flood-64", func(b *testing.B) { benchInject(b, c, 1, eth(0xff, 1, -1, 64)) })
	}
}

// TestRawTableOps: VTU and ATU operations the driver does not use, through
// raw register writes (remove port, get one, purge).
func TestRawTableOps(t *testing.T) {
	m, sw := attach(t, arswitchsim.AR8327)
	lanWAN(t, sw)
	wait := func() { m.Clock().Sleep(time.Millisecond) }
	// VTU remove port 0 (op 4) from every VLAN.
	m.Poke(0x614, 4|0<<8|1<<31)
	wait()
	for _, v := range m.VLANs() {
		if v.Members&1 != 0 {
			t.Errorf("VLAN %d still has port 0: %+v", v.VID, v)
		}
	}
	// VTU get one (op 6) for VID 2.
	m.Poke(0x614, 6|2<<16|1<<31)
	wait()
	if f0 := m.Peek(0x610); f0&(1<<20) == 0 || (f0>>(4+2*5))&3 != 1 {
		t.Errorf("get one VID 2: FUNC0 %#08x", f0)
	}
	// ATU: learn, then purge one address by MAC+VID.
	m.Inject(1, eth(0xff, 1, -1, 64))
	m.Inject(2, eth(0xff, 2, -1, 64))
	if len(m.ATU()) != 2 {
		t.Fatalf("ATU %+v", m.ATU())
	}
	m.Poke(0x600, 0x00000001) // MAC bytes 2-5
	m.Poke(0x604, 0x0200)     // MAC bytes 0-1
	m.Poke(0x608, 1<<8)       // VID 1
	m.Poke(0x60c, 3|1<<31)    // purge
	wait()
	if a := m.ATU(); len(a) != 1 || a[0].MAC[5] != 2 {
		t.Errorf("after purge: %+v", a)
	}
	if v := m.Violations(); len(v) != 0 {
		t.Error(v)
	}

	m16, sw16 := attach(t, arswitchsim.AR8316)
	lanWAN(t, sw16)
	m16.Poke(0x040, 4|5<<8|1<<3) // remove port 5
	wait16 := func() { m16.Clock().Sleep(time.Millisecond) }
	wait16()
	for _, v := range m16.VLANs() {
		if v.Members&(1<<5) != 0 {
			t.Errorf("AR8316 VLAN %d still has port 5", v.VID)
		}
	}
	m16.Inject(1, eth(0xff, 1, -1, 64))
	m16.Poke(0x054, 0x02000000)
	m16.Poke(0x050, 0x01<<16|3|1<<3) // purge 02:00:00:00:00:01
	wait16()
	if a := m16.ATU(); len(a) != 0 {
		t.Errorf("AR8316 after purge: %+v", a)
	}
}
