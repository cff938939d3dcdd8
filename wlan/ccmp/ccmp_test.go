package ccmp

import (
	"bytes"
	"crypto/aes"
	"errors"
	"github.com/gowrt/gowrt/internal/testutil"
	"testing"
)

// RFC 3610 §8, Packet Vectors #1..#3: AES key C0..CF, M = 8, L = 2 (the
// CCMP parameters), 8 cleartext header octets as AAD.
var rfc3610 = []struct {
	name, nonce, in, out string
}{
	{"#1", "00000003020100A0A1A2A3A4A5",
		"000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E",
		"0001020304050607588C979A61C663D2F066D0C2C0F989806D5F6B61DAC38417E8D12CFDF926E0"},
	{"#2", "00000004030201A0A1A2A3A4A5",
		"000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
		"000102030405060772C91A36E135F8CF291CA894085C87E3CC15C439C9E43A3BA091D56E10400916"},
	{"#3", "00000005040302A0A1A2A3A4A5",
		"000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F20",
		"000102030405060751B1E5F44A197D1DA46B0F8E2D282AE871E838BB64DA8596574ADAA76FBD9FB0C5"},
}

func TestCCMRFC3610(t *testing.T) {
	b, _ := aes.NewCipher(testutil.Unhex(t, "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECF"))
	for _, v := range rfc3610 {
		var nonce [ccmNonceLen]byte
		copy(nonce[:], testutil.Unhex(t, v.nonce))
		in, want := testutil.Unhex(t, v.in), testutil.Unhex(t, v.out)
		c := ccm{block: b}
		buf := append(append([]byte{}, in...), make([]byte, ccmMICLen)...)
		c.seal(&nonce, buf[:8], buf[8:len(in)], buf[len(in):])
		if !bytes.Equal(buf, want) {
			t.Errorf("%s: seal = %x, want %x", v.name, buf, want)
		}
		if !c.open(&nonce, buf[:8], buf[8:len(in)], buf[len(in):]) || !bytes.Equal(buf[:len(in)], in) {
			t.Errorf("%s: open failed or wrong plaintext %x", v.name, buf[:len(in)])
		}
		copy(buf, want)
		buf[len(buf)-1] ^= 1
		if c.open(&nonce, buf[:8], buf[8:len(in)], buf[len(in):]) {
			t.Errorf("%s: open accepted a corrupted tag", v.name)
		}
	}
}

// IEEE 802.11-2016 Annex J.6.4 (802.11-2012 M.6.4) CCMP test MPDU 1: a
// data frame with Retry set, TK c97c1f67..., PN 0xB5039776E70C, key ID 0.
// The published expected frame is followed by its FCS (1d99f066), which
// this package neither writes nor checks.
const (
	j64TK        = "c97c1f67ce371185514a8a19f2bdd52f"
	j64PN        = 0xB5039776E70C
	j64Plaintext = "08 48 c3 2c 0f d2 e1 28 a5 7c 50 30 f1 84 44 08 ab ae a5 b8 fc ba 80 33" +
		"f8 ba 1a 55 d0 2f 85 ae 96 7b b6 2f b6 cd a8 eb 7e 78 a0 50"
	j64Encrypted = "08 48 c3 2c 0f d2 e1 28 a5 7c 50 30 f1 84 44 08 ab ae a5 b8 fc ba" +
		"80 33 0c e7 00 20 76 97 03 b5 f3 d0 a2 fe 9a 3d bf 23 42 a6 43 e4" +
		"32 46 e8 0c 3c 04 d0 19 78 45 ce 0b 16 f9 76 23"
	j64AAD   = "08 40 0f d2 e1 28 a5 7c 50 30 f1 84 44 08 ab ae a5 b8 fc ba 00 00"
	j64Nonce = "00 50 30 f1 84 44 08 b5 03 97 76 e7 0c"
)

func TestCCMPAnnexJ64(t *testing.T) {
	k, err := NewKey(testutil.Unhex(t, j64TK), 0)
	if err != nil {
		t.Fatal(err)
	}
	plain, want := testutil.Unhex(t, j64Plaintext), testutil.Unhex(t, j64Encrypted)

	// The intermediate values the annex lists.
	h, err := parseHeader(plain)
	if err != nil {
		t.Fatal(err)
	}
	var aad [maxAADLen]byte
	n := buildAAD(&aad, plain, &h)
	if got := aad[:n]; !bytes.Equal(got, testutil.Unhex(t, j64AAD)) {
		t.Errorf("AAD = %x, want %s", got, j64AAD)
	}
	var nonce [ccmNonceLen]byte
	buildNonce(&nonce, plain, &h, j64PN)
	if !bytes.Equal(nonce[:], testutil.Unhex(t, j64Nonce)) {
		t.Errorf("nonce = %x, want %s", nonce, j64Nonce)
	}

	buf := make([]byte, len(plain), len(plain)+Overhead)
	copy(buf, plain)
	got, err := k.EncapPN(buf, j64PN)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encap =\n%x\nwant\n%x", got, want)
	}
	dec, err := k.Decap(got)
	if err != nil {
		t.Fatal(err)
	}
	wantPlain := append([]byte{}, plain...)
	wantPlain[1] &^= fcProtected
	if !bytes.Equal(dec, wantPlain) {
		t.Fatalf("Decap = %x, want %x", dec, wantPlain)
	}
}

// qosFrame builds a QoS data frame (optionally 4-address) with the given
// TID and a body of n octets, with Overhead octets of tailroom.
func qosFrame(tid byte, a4 bool, n int) []byte {
	f := []byte{0x88, 0x01, 0, 0, 1, 2, 3, 4, 5, 6, 0x02, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 0x10, 0}
	if a4 {
		f[1] = 0x03
		f = append(f, 0x02, 0, 0, 0, 0, 9)
	}
	f = append(f, tid, 0)
	for i := range n {
		f = append(f, byte(i))
	}
	out := make([]byte, len(f), len(f)+Overhead)
	copy(out, f)
	return out
}

func TestRoundTripShapes(t *testing.T) {
	tx, _ := NewKey(bytes.Repeat([]byte{7}, 16), 1)
	rx, _ := NewKey(bytes.Repeat([]byte{7}, 16), 1)
	for _, a4 := range []bool{false, true} {
		for _, n := range []int{0, 1, 15, 16, 17, 1500, 2304} {
			f := qosFrame(5, a4, n)
			orig := append([]byte{}, f...)
			enc, err := tx.Encap(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(enc[len(orig)-n:len(orig)], orig[len(orig)-n:]) && n > 4 {
				t.Fatalf("body not encrypted")
			}
			dec, err := rx.Decap(enc)
			if err != nil {
				t.Fatalf("a4=%v n=%d: %v", a4, n, err)
			}
			if !bytes.Equal(dec, orig) {
				t.Fatalf("a4=%v n=%d: round trip differs", a4, n)
			}
		}
	}
}

func TestReplayAndTamper(t *testing.T) {
	tx, _ := NewKey(bytes.Repeat([]byte{1}, 16), 0)
	rx, _ := NewKey(bytes.Repeat([]byte{1}, 16), 0)
	seal := func(tid byte) []byte {
		e, err := tx.Encap(qosFrame(tid, false, 64))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	f1, f2 := seal(0), seal(0)
	c2 := append([]byte{}, f2...)
	if _, err := rx.Decap(f2); err != nil {
		t.Fatal(err)
	}
	if _, err := rx.Decap(c2); !errors.Is(err, ErrReplay) {
		t.Fatalf("replayed frame: %v, want ErrReplay", err)
	}
	if _, err := rx.Decap(f1); !errors.Is(err, ErrReplay) {
		t.Fatalf("old PN: %v, want ErrReplay", err)
	}
	if rx.Stats.Replays.Load() != 2 {
		t.Fatalf("Replays = %d", rx.Stats.Replays.Load())
	}
	// Another TID has its own counter: a lower PN there is fine.
	tx.SetTxPN(0)
	if _, err := rx.Decap(seal(3)); err != nil {
		t.Fatalf("other TID: %v", err)
	}
	// A flipped bit anywhere authenticated is a MIC failure and does not
	// advance the counter.
	for _, pos := range []int{1, 4, 10, 16, 22, 24, 40, 70} {
		f := seal(6)
		f[pos] ^= 0x04
		if _, err := rx.Decap(f); err == nil {
			t.Errorf("flip at %d accepted", pos)
		}
	}
	if rx.Stats.MICErrors.Load() == 0 {
		t.Fatal("no MIC errors counted")
	}
	// Retry and sequence number are not authenticated (a retransmission
	// carries the same PN): changing them still decrypts.
	f := seal(6)
	f[1] |= fcRetry
	f[23] ^= 0x50
	if _, err := rx.Decap(f); err != nil {
		t.Fatalf("retry/SN change: %v", err)
	}
	// Wrong key ID.
	g, _ := NewKey(bytes.Repeat([]byte{1}, 16), 2)
	if _, err := g.Decap(seal(0)); !errors.Is(err, ErrKeyID) {
		t.Fatalf("key ID: %v", err)
	}
	if _, err := tx.Encap(make([]byte, 30)); !errors.Is(err, ErrTailroom) {
		t.Fatalf("tailroom: %v", err)
	}
}

func TestNoAllocs(t *testing.T) {
	tx, _ := NewKey(bytes.Repeat([]byte{2}, 16), 0)
	rx, _ := NewKey(bytes.Repeat([]byte{2}, 16), 0)
	plain := qosFrame(1, false, 1500)
	buf := make([]byte, len(plain), len(plain)+Overhead)
	allocs := testing.AllocsPerRun(100, func() {
		copy(buf, plain)
		enc, err := tx.Encap(buf[:len(plain)])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rx.Decap(enc); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per encap+decap", allocs)
	}
	// Dropped frames allocate nothing either.
	allocs = testing.AllocsPerRun(100, func() {
		copy(buf, plain)
		enc, _ := tx.Encap(buf[:len(plain)])
		enc[40] ^= 1
		if _, err := rx.Decap(enc); err == nil {
			t.Fatal("accepted")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per dropped frame", allocs)
	}
}

// frame1500 is a QoS data MPDU with a 1500-octet body (an Ethernet MTU's
// worth of LLC payload).
func BenchmarkEncap1500(b *testing.B) {
	k, _ := NewKey(bytes.Repeat([]byte{3}, 16), 0)
	plain := qosFrame(0, false, 1500)
	buf := make([]byte, len(plain), len(plain)+Overhead)
	b.SetBytes(1500)
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, plain)
		if _, err := k.Encap(buf[:len(plain)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecap1500(b *testing.B) {
	tx, _ := NewKey(bytes.Repeat([]byte{3}, 16), 0)
	rx, _ := NewKey(bytes.Repeat([]byte{3}, 16), 0)
	plain := qosFrame(0, false, 1500)
	buf := make([]byte, len(plain), len(plain)+Overhead)
	copy(buf, plain)
	enc, _ := tx.Encap(buf)
	sealed := append([]byte{}, enc...)
	b.SetBytes(1500)
	b.ReportAllocs()
	for b.Loop() {
		copy(buf[:len(sealed)], sealed)
		rx.rxPN[0] = 0
		if _, err := rx.Decap(buf[:len(sealed)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAESBlocks1500 is the baseline: the raw crypto/aes block
// encryptions of 1500 octets (94 blocks), once. CCM needs about twice that
// (CBC-MAC and CTR each encrypt every block) plus the header blocks.
func BenchmarkAESBlocks1500(b *testing.B) {
	blk, _ := aes.NewCipher(bytes.Repeat([]byte{3}, 16))
	buf := make([]byte, 94*16)
	b.SetBytes(1500)
	b.ReportAllocs()
	for b.Loop() {
		for off := 0; off < len(buf); off += 16 {
			blk.Encrypt(buf[off:off+16], buf[off:off+16])
		}
	}
}

func FuzzDecap(f *testing.F) {
	f.Add(testutil.Unhex(f, j64Encrypted))
	tx, _ := NewKey(bytes.Repeat([]byte{4}, 16), 0)
	for _, a4 := range []bool{false, true} {
		e, _ := tx.Encap(qosFrame(2, a4, 40))
		f.Add(append([]byte{}, e...))
	}
	f.Add([]byte{0x88, 0xc3})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, _ := NewKey(bytes.Repeat([]byte{4}, 16), 0)
		in := append([]byte{}, b...)
		out, err := k.Decap(in)
		if err == nil {
			if len(out) != len(b)-Overhead {
				t.Fatalf("length %d from %d", len(out), len(b))
			}
			// An accepted frame re-encrypts to the same bytes but the
			// CCMP header's reserved octet, which nothing authenticates.
			re := make([]byte, len(out), len(out)+Overhead)
			copy(re, out)
			h, _ := parseHeader(b)
			want := append([]byte{}, b...)
			want[h.len+2] = 0
			enc, err := k.EncapPN(re, readPN(b[h.len:]))
			if err != nil || !bytes.Equal(enc, want) {
				t.Fatalf("re-encap differs: %v", err)
			}
		}
	})
}
