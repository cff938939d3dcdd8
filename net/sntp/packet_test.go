package sntp

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// Dates and NTP timestamps from RFC 5905 Figure 4 ("Interesting
// Historic NTP Dates"), era by era.
func TestTimestampRFC5905Dates(t *testing.T) {
	for _, c := range []struct {
		date time.Time
		sec  uint32 // timestamp seconds within the era
	}{
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 2_208_988_800},
		{time.Date(1972, 1, 1, 0, 0, 0, 0, time.UTC), 2_272_060_800},
		{time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), 3_155_587_200},
		{time.Date(2036, 2, 8, 0, 0, 0, 0, time.UTC), 63_104}, // era 1
	} {
		ts := TimestampOf(c.date)
		if got := uint32(ts >> 32); got != c.sec || uint32(ts) != 0 {
			t.Errorf("%v: timestamp %d.%d, want %d", c.date, got, uint32(ts), c.sec)
		}
		if got := ts.Time(); !got.Equal(c.date) {
			t.Errorf("%d: %v, want %v", c.sec, got, c.date)
		}
	}
}

// RFC 4330 §3: the most significant bit picks the era.
func TestTimestampEraPivot(t *testing.T) {
	eraStart := time.Date(2036, 2, 7, 6, 28, 16, 0, time.UTC)
	for _, c := range []struct {
		sec  uint32
		want time.Time
	}{
		{0x8000_0000, time.Date(1968, 1, 20, 3, 14, 8, 0, time.UTC)},
		{0xffff_ffff, eraStart.Add(-time.Second)},
		{0, eraStart},
		{0x7fff_ffff, eraStart.Add(0x7fff_ffff * time.Second)}, // 2104
	} {
		if got := Timestamp(uint64(c.sec) << 32).Time(); !got.Equal(c.want) {
			t.Errorf("%#x: %v, want %v", c.sec, got, c.want)
		}
	}
	for _, tm := range []time.Time{
		time.Date(2026, 12, 1, 14, 6, 12, 123456789, time.UTC),
		time.Date(2036, 2, 7, 6, 28, 15, 999999999, time.UTC),
		time.Date(2036, 2, 7, 6, 28, 16, 1, time.UTC),
		time.Date(2040, 1, 1, 0, 0, 0, 500_000_000, time.UTC),
		time.Date(2100, 6, 6, 6, 6, 6, 6, time.UTC),
	} {
		if got := TimestampOf(tm).Time(); !got.Equal(tm) {
			t.Errorf("round trip of %v: %v", tm, got)
		}
	}
}

func TestShortFormat(t *testing.T) {
	for v, want := range map[uint32]time.Duration{
		0x0001_0000: time.Second,
		0x0000_8000: 500 * time.Millisecond,
		0x0010_0000: 16 * time.Second,
		0x0000_0001: 15258, // 2^-16 s, truncated to ns
	} {
		if got := shortDuration(v); got != want {
			t.Errorf("%#x: %v, want %v", v, got, want)
		}
	}
}

func TestPacketRoundTrip(t *testing.T) {
	p := Packet{Leap: 2, Version: 4, Mode: ModeServer, Stratum: 2, Poll: 6, Precision: -23,
		RootDelay: 0x1234, RootDispersion: 0x5678, RefID: [4]byte{192, 0, 2, 1},
		Reference: 1, Originate: 0x0102030405060708, Receive: 3, Transmit: 0xfedcba9876543210}
	var b [PacketLen]byte
	p.Encode(b[:])
	if b[0] != 2<<6|4<<3|4 || b[3] != 0xe9 || b[24] != 1 || b[31] != 8 {
		t.Fatalf("wire: % x", b)
	}
	got, err := Decode(b[:])
	if err != nil || got != p {
		t.Fatalf("Decode = %+v %v", got, err)
	}
	if _, err := Decode(b[:47]); !errors.Is(err, ErrShort) {
		t.Fatalf("47 bytes: %v", err)
	}
}

func goodReply(sent Timestamp) Packet {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	return Packet{Version: 4, Mode: ModeServer, Stratum: 2, RootDelay: 0x0000_0800, RootDispersion: 0x0000_0400,
		RefID: [4]byte{10, 0, 0, 1}, Reference: TimestampOf(now.Add(-time.Minute)), Originate: sent,
		Receive: TimestampOf(now), Transmit: TimestampOf(now.Add(time.Microsecond))}
}

func TestValidate(t *testing.T) {
	const sent = Timestamp(0x1122334455667788)
	for _, c := range []struct {
		name string
		edit func(*Packet)
		want error
	}{
		{"good", func(*Packet) {}, nil},
		{"version 3", func(p *Packet) { p.Version = 3 }, nil},
		{"client mode", func(p *Packet) { p.Mode = ModeClient }, ErrNotServer},
		{"broadcast mode", func(p *Packet) { p.Mode = 5 }, ErrNotServer},
		{"version 2", func(p *Packet) { p.Version = 2 }, ErrVersion},
		{"version 5", func(p *Packet) { p.Version = 5 }, ErrVersion},
		{"spoofed", func(p *Packet) { p.Originate++ }, ErrSpoofed},
		{"spoofed kod", func(p *Packet) { p.Originate = 0; p.Stratum = 0; p.RefID = [4]byte{'D', 'E', 'N', 'Y'} }, ErrSpoofed},
		{"stratum 16", func(p *Packet) { p.Stratum = 16 }, ErrStratum},
		{"stratum 255", func(p *Packet) { p.Stratum = 255 }, ErrStratum},
		{"leap 3", func(p *Packet) { p.Leap = LeapNotSync }, ErrLeap},
		{"zero transmit", func(p *Packet) { p.Transmit = 0 }, ErrZeroTime},
		{"zero receive", func(p *Packet) { p.Receive = 0 }, ErrZeroTime},
		{"root delay 16 s", func(p *Packet) { p.RootDelay = 16 << 16 }, ErrRootDist},
		{"negative root delay", func(p *Packet) { p.RootDelay = 0x8000_0000 }, ErrRootDist},
		{"root dispersion 1 s", func(p *Packet) { p.RootDispersion = 1 << 16 }, ErrRootDist},
		{"root distance 1 s", func(p *Packet) { p.RootDelay = 1 << 16; p.RootDispersion = 1 << 15 }, ErrRootDist},
		{"transmit before receive", func(p *Packet) { p.Transmit, p.Receive = p.Receive, p.Transmit }, ErrTimeOrder},
	} {
		p := goodReply(sent)
		c.edit(&p)
		err := Validate(&p, sent)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	for code, want := range map[string][2]bool{"RATE": {false, true}, "DENY": {true, false}, "RSTR": {true, false}, "INIT": {false, false}} {
		p := goodReply(sent)
		p.Stratum = 0
		copy(p.RefID[:], code)
		var k *KissError
		if err := Validate(&p, sent); !errors.As(err, &k) || k.Code != code || k.Stop() != want[0] || k.RateLimit() != want[1] {
			t.Errorf("kiss %s: %v", code, err)
		}
	}
}

// Offset and delay from the four timestamps (RFC 5905 §8).
func TestCompute(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	// Client 2 s behind; 10 ms each way; server holds it 1 ms.
	s := Sample{T1: base, T2: base.Add(2*time.Second + 10*time.Millisecond),
		T3: base.Add(2*time.Second + 11*time.Millisecond), T4: base.Add(21 * time.Millisecond)}
	s.Compute()
	if s.Offset != 2*time.Second || s.Delay != 20*time.Millisecond {
		t.Fatalf("offset %v delay %v", s.Offset, s.Delay)
	}
	// Asymmetric path: 30 ms out, 10 ms back: offset is off by half the
	// asymmetry, as RFC 5905 says it must be.
	s = Sample{T1: base, T2: base.Add(30 * time.Millisecond), T3: base.Add(30 * time.Millisecond), T4: base.Add(40 * time.Millisecond)}
	s.Compute()
	if s.Offset != 10*time.Millisecond || s.Delay != 40*time.Millisecond {
		t.Fatalf("asymmetric: offset %v delay %v", s.Offset, s.Delay)
	}
}

func FuzzDecodeValidate(f *testing.F) {
	var b [PacketLen]byte
	p := goodReply(42)
	p.Encode(b[:])
	f.Add(b[:], uint64(42))
	p.Stratum = 0
	copy(p.RefID[:], "RATE")
	p.Encode(b[:])
	f.Add(b[:], uint64(42))
	f.Add(make([]byte, 47), uint64(0))
	f.Add(append(b[:], make([]byte, 20)...), uint64(42))
	f.Fuzz(func(t *testing.T, data []byte, sent uint64) {
		p, err := Decode(data)
		if err != nil {
			if len(data) >= PacketLen {
				t.Fatalf("%d bytes refused: %v", len(data), err)
			}
			return
		}
		var out [PacketLen]byte
		p.Encode(out[:])
		if !bytes.Equal(out[:], data[:PacketLen]) {
			t.Fatalf("re-encoding differs:\n% x\n% x", out, data[:PacketLen])
		}
		if err := Validate(&p, Timestamp(sent)); err == nil {
			if p.Mode != ModeServer || p.Stratum == 0 || p.Stratum > 15 || p.Leap == 3 || p.Transmit == 0 || p.Originate != Timestamp(sent) {
				t.Fatalf("accepted %+v", p)
			}
			s := Sample{T1: time.Unix(0, 0), T2: p.Receive.Time(), T3: p.Transmit.Time(), T4: time.Unix(1, 0)}
			s.Compute()
			if s.Delay < 0 {
				t.Fatalf("negative delay %v", s.Delay)
			}
		}
	})
}
