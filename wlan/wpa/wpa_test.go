package wpa

import (
	"bytes"
	"encoding/hex"
	"errors"
	"github.com/gowrt/gowrt/internal/testutil"
	"strings"
	"testing"
	"time"
)

// IEEE 802.11-2016 Annex J.4.2 passphrase-to-PSK test vectors.
func TestPSKAnnexJ4(t *testing.T) {
	for _, v := range []struct{ pass, ssid, psk string }{
		{"password", "IEEE", "f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e"},
		{"ThisIsAPassword", "ThisIsASSID", "0dc0d6eb90555ed6419756b9a15ec3e3209b63df707dd508d14581f8982721af"},
		{strings.Repeat("a", 32), strings.Repeat("Z", 32), "becb93866bb8c3832cb777c2f559807c8c59afcb6eae734885001300a981cc62"},
	} {
		got, err := PSK(v.pass, []byte(v.ssid))
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(got[:]) != v.psk {
			t.Errorf("PSK(%q, %q) = %x, want %s", v.pass, v.ssid, got, v.psk)
		}
	}
	hexPSK := "f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e"
	if got, err := PSK(hexPSK, []byte("x")); err != nil || hex.EncodeToString(got[:]) != hexPSK {
		t.Errorf("hex PSK: %x %v", got, err)
	}
	for _, bad := range []struct{ pass, ssid string }{
		{"short", "IEEE"}, {strings.Repeat("a", 65), "IEEE"}, {strings.Repeat("g", 64), "IEEE"},
		{"pass\x01word", "IEEE"}, {"passwörd", "IEEE"}, {"password", ""}, {"password", strings.Repeat("s", 33)},
	} {
		if _, err := PSK(bad.pass, []byte(bad.ssid)); err == nil {
			t.Errorf("PSK(%q, %q) accepted", bad.pass, bad.ssid)
		}
	}
}

// IEEE 802.11-2016 Annex J.3 PRF test vector 1 (the RFC 2202 HMAC-SHA1
// key 0x0b * 20 with label "prefix" and data "Hi There", PRF-512).
func TestPRFAnnexJ3(t *testing.T) {
	out := make([]byte, 64)
	PRF(bytes.Repeat([]byte{0x0b}, 20), "prefix", []byte("Hi There"), out)
	want := "bcd4c650b30b9684951829e0d75f9d54b862175ed9f00606e17d8da35402ffee" +
		"75df78c3d31e0f889f012120c0862beb67753e7439ae242edb8373698356cf5a"
	if hex.EncodeToString(out) != want {
		t.Fatalf("PRF = %x, want %s", out, want)
	}
	// A shorter output is a prefix (PRF-384 of the same input).
	out48 := make([]byte, 48)
	PRF(bytes.Repeat([]byte{0x0b}, 20), "prefix", []byte("Hi There"), out48)
	if !bytes.Equal(out48, out[:48]) {
		t.Fatal("PRF-384 is not a prefix of PRF-512")
	}
}

func TestPTKSymmetric(t *testing.T) {
	pmk, _ := PSK("password", []byte("IEEE"))
	aa, spa := [6]byte{0, 1, 2, 3, 4, 5}, [6]byte{0, 1, 2, 3, 4, 6}
	var n1, n2 [NonceLen]byte
	n1[0], n2[0] = 1, 2
	p1 := DerivePTK(&pmk, aa, spa, &n1, &n2)
	p2 := DerivePTK(&pmk, spa, aa, &n2, &n1)
	if p1 != p2 {
		t.Fatal("PTK depends on argument order")
	}
	// The split is KCK || KEK || TK of PRF-384.
	data := append(append(append(append([]byte{}, aa[:]...), spa[:]...), n1[:]...), n2[:]...)
	out := make([]byte, 48)
	PRF(pmk[:], "Pairwise key expansion", data, out)
	if !bytes.Equal(out[:16], p1.KCK[:]) || !bytes.Equal(out[16:32], p1.KEK[:]) || !bytes.Equal(out[32:], p1.TK[:]) {
		t.Fatal("PTK split wrong")
	}
}

// RFC 3394 §4.1..4.6.
func TestKeyWrapRFC3394(t *testing.T) {
	kek := "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
	data := "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F"
	for _, v := range []struct {
		sec           string
		kekLen, dataN int
		out           string
	}{
		{"4.1", 16, 16, "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"},
		{"4.2", 24, 16, "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D"},
		{"4.3", 32, 16, "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"},
		{"4.4", 24, 24, "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2"},
		{"4.5", 32, 24, "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1"},
		{"4.6", 32, 32, "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"},
	} {
		k, d := testutil.Unhex(t, kek)[:v.kekLen], testutil.Unhex(t, data)[:v.dataN]
		w, err := WrapKey(k, d)
		if err != nil || !bytes.Equal(w, testutil.Unhex(t, v.out)) {
			t.Errorf("§%s wrap = %X %v, want %s", v.sec, w, err, v.out)
		}
		u, err := UnwrapKey(k, w)
		if err != nil || !bytes.Equal(u, d) {
			t.Errorf("§%s unwrap = %X %v", v.sec, u, err)
		}
		w[3] ^= 1
		if _, err := UnwrapKey(k, w); !errors.Is(err, ErrKeyWrapIntegrity) {
			t.Errorf("§%s: corrupted unwrap: %v", v.sec, err)
		}
	}
}

func TestPadKeyData(t *testing.T) {
	for _, c := range []struct{ in, out int }{{0, 16}, {1, 16}, {15, 16}, {16, 16}, {17, 24}, {22, 24}, {24, 24}, {46, 48}} {
		p := PadKeyData(bytes.Repeat([]byte{1}, c.in))
		if len(p) != c.out {
			t.Errorf("pad %d -> %d, want %d", c.in, len(p), c.out)
		}
		if c.in != c.out && (p[c.in] != 0xdd || !allZero(p[c.in+1:])) {
			t.Errorf("pad %d: %x", c.in, p)
		}
	}
	// Padding parses away.
	kd := PadKeyData(AppendGTKKDE(RSNElementPSKCCMP(0), 1, true, bytes.Repeat([]byte{9}, 16)))
	got, err := ParseKeyData(kd)
	if err != nil || got.GTKID != 1 || !got.GTKTx || !bytes.Equal(got.GTK, bytes.Repeat([]byte{9}, 16)) ||
		!bytes.Equal(got.RSNE, RSNElementPSKCCMP(0)) {
		t.Fatalf("ParseKeyData = %+v, %v", got, err)
	}
}

func TestKeyFrameRoundTrip(t *testing.T) {
	k := KeyFrame{KeyInfo: 0x13ca, KeyLength: 16, Replay: 0x0102030405060708, RSC: 0x112233, KeyData: []byte{1, 2, 3}}
	k.Nonce[5] = 7
	k.IV[1] = 3
	b := k.Marshal()
	SignKeyFrame(bytes.Repeat([]byte{5}, 16), b)
	// A padded (short Ethernet) frame still verifies.
	padded := append(append([]byte{}, b...), 0, 0, 0)
	if err := VerifyKeyFrameMIC(bytes.Repeat([]byte{5}, 16), padded); err != nil {
		t.Fatal(err)
	}
	got, err := ParseKeyFrame(padded)
	if err != nil {
		t.Fatal(err)
	}
	k.Version = eapolVersion
	copy(k.MIC[:], b[offMIC:])
	if got.KeyInfo != k.KeyInfo || got.Replay != k.Replay || got.RSC != k.RSC || got.Nonce != k.Nonce ||
		got.IV != k.IV || got.MIC != k.MIC || !bytes.Equal(got.KeyData, k.KeyData) || got.KeyLength != 16 {
		t.Fatalf("round trip: %+v vs %+v", got, k)
	}
	b[20] ^= 1
	if err := VerifyKeyFrameMIC(bytes.Repeat([]byte{5}, 16), b); !errors.Is(err, ErrMICMismatch) {
		t.Fatalf("tampered: %v", err)
	}
}

// pair runs an authenticator and a supplicant over a lossless in-memory
// link.
type pair struct {
	gk   *GroupKeyRing
	cfg  *AuthenticatorConfig
	auth *Authenticator
	supp *Supplicant
	now  time.Time
}

var (
	apAddr  = [6]byte{0x02, 0, 0, 0, 0, 1}
	staAddr = [6]byte{0x02, 0, 0, 0, 0, 2}
)

func newPair(t testing.TB, apPass, staPass string, guard *MICFailureGuard) *pair {
	now := time.Unix(1000, 0)
	apPMK, err := PSK(apPass, []byte("gowrt"))
	if err != nil {
		t.Fatal(err)
	}
	staPMK, err := PSK(staPass, []byte("gowrt"))
	if err != nil {
		t.Fatal(err)
	}
	gk, err := NewGroupKeyRing(time.Hour, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	rsne := RSNElementPSKCCMP(0)
	cfg := &AuthenticatorConfig{PMK: apPMK, AA: apAddr, RSNE: rsne, Group: gk.Current, Guard: guard}
	p := &pair{gk: gk, cfg: cfg, now: now}
	p.auth = NewAuthenticator(cfg, staAddr, rsne)
	p.supp = NewSupplicant(&SupplicantConfig{PMK: staPMK, SPA: staAddr, AA: apAddr, RSNE: rsne, APRSNE: rsne})
	return p
}

// run exchanges messages from m1 on until nobody answers; it returns the
// events of each side and the frames sent, in order.
func (p *pair) run(t testing.TB, m1 []byte) (authEv, suppEv Event, frames [][]byte) {
	toSupp := m1
	for toSupp != nil {
		frames = append(frames, toSupp)
		reply, ev, err := p.supp.Receive(toSupp)
		suppEv |= ev
		if err != nil {
			t.Logf("supplicant: %v", err)
			return
		}
		frames = append(frames, reply)
		toSupp, ev, err = p.auth.Receive(reply, p.now)
		authEv |= ev
		if err != nil {
			t.Logf("authenticator: %v", err)
			return
		}
	}
	return
}

func TestHandshake(t *testing.T) {
	p := newPair(t, "correct horse", "correct horse", nil)
	m1, err := p.auth.Start(p.now)
	if err != nil {
		t.Fatal(err)
	}
	aev, sev, frames := p.run(t, m1)
	if aev != EventPTK|EventGTK || sev != EventPTK|EventGTK || len(frames) != 4 {
		t.Fatalf("events %b %b, %d frames", aev, sev, len(frames))
	}
	wantInfo := []uint16{0x008a, 0x010a, 0x13ca, 0x030a}
	for i, f := range frames {
		k, err := ParseKeyFrame(f)
		if err != nil || k.KeyInfo != wantInfo[i] {
			t.Errorf("message %d key info %#04x, want %#04x (%v)", i+1, k.KeyInfo, wantInfo[i], err)
		}
	}
	ap, _ := p.auth.PTK()
	st, _ := p.supp.PTK()
	if ap != st {
		t.Fatal("PTKs differ")
	}
	gtk, id, _ := p.supp.GTK()
	if cur := p.gk.Current(); !bytes.Equal(gtk, cur.GTK[:]) || id != cur.KeyID {
		t.Fatal("GTK not delivered")
	}
	// A replayed message 3 is refused by the supplicant.
	if _, _, err := p.supp.Receive(frames[2]); !errors.Is(err, ErrReplay) {
		t.Fatalf("replayed message 3: %v", err)
	}
	// Group rekey.
	p.gk.SetRSC(77)
	if err := p.gk.Rekey(p.now); err != nil {
		t.Fatal(err)
	}
	g1, err := p.auth.RekeyGroup(p.now)
	if err != nil {
		t.Fatal(err)
	}
	aev, sev, frames = p.run(t, g1)
	if aev != EventGTK || sev != EventGTK || len(frames) != 2 {
		t.Fatalf("group rekey events %b %b", aev, sev)
	}
	gtk, id, rsc := p.supp.GTK()
	if cur := p.gk.Current(); !bytes.Equal(gtk, cur.GTK[:]) || id != 2 || rsc != 0 {
		t.Fatalf("new GTK not delivered: id %d rsc %d", id, rsc)
	}
	if _, _, err := p.auth.Receive(frames[1], p.now); err == nil {
		t.Fatal("replayed group message 2 accepted")
	}
}

func TestHandshakeRetriesAndTimeout(t *testing.T) {
	p := newPair(t, "correct horse", "correct horse", nil)
	m1, _ := p.auth.Start(p.now)
	// Message 1 lost twice: retransmissions carry new replay counters.
	var last = m1
	for i := 0; i < 2; i++ {
		if f, _ := p.auth.Tick(p.now.Add(500 * time.Millisecond)); f != nil {
			t.Fatal("retransmitted before the timeout")
		}
		p.now = p.now.Add(time.Second)
		f, ev := p.auth.Tick(p.now)
		if f == nil || ev != 0 {
			t.Fatal("no retransmission")
		}
		k0, _ := ParseKeyFrame(last)
		k1, _ := ParseKeyFrame(f)
		if k1.Replay != k0.Replay+1 || k1.Nonce != k0.Nonce {
			t.Fatalf("retransmission replay %d after %d", k1.Replay, k0.Replay)
		}
		last = f
	}
	// The station answers the first copy: still accepted (same step).
	aev, sev, _ := p.run(t, m1)
	if aev&EventPTK == 0 || sev&EventPTK == 0 {
		t.Fatalf("handshake after retries: %b %b", aev, sev)
	}
	// A station that never answers: after Tries transmissions, failure.
	q := newPair(t, "correct horse", "correct horse", nil)
	q.auth.Start(q.now)
	var ev Event
	for i := 0; i < 10 && ev == 0; i++ {
		q.now = q.now.Add(time.Second)
		_, ev = q.auth.Tick(q.now)
	}
	if ev != EventFailed || q.auth.Stats.Retransmits.Load() != DefaultEAPOLTries-1 {
		t.Fatalf("timeout: event %b after %d retransmits", ev, q.auth.Stats.Retransmits.Load())
	}
}

func TestWrongPassphraseRefused(t *testing.T) {
	guard := &MICFailureGuard{}
	var failed bool
	for i := 0; i < DefaultMICFailureThreshold; i++ {
		p := newPair(t, "correct horse", "wrong horse", guard)
		m1, err := p.auth.Start(p.now.Add(time.Duration(i) * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		m2, _, err := p.supp.Receive(m1)
		if err != nil {
			t.Fatal(err)
		}
		_, ev, err := p.auth.Receive(m2, p.now.Add(time.Duration(i)*time.Second))
		if !errors.Is(err, ErrMICMismatch) {
			t.Fatalf("wrong passphrase message 2: %v", err)
		}
		if p.auth.Stats.MICFailures.Load() != 1 {
			t.Fatal("MIC failure not counted")
		}
		failed = ev == EventFailed
	}
	if !failed || guard.Failures(staAddr) != DefaultMICFailureThreshold {
		t.Fatalf("not refused after %d failures", guard.Failures(staAddr))
	}
	p := newPair(t, "correct horse", "correct horse", guard)
	if _, err := p.auth.Start(p.now.Add(10 * time.Second)); !errors.Is(err, ErrRefused) {
		t.Fatalf("refused station started: %v", err)
	}
	if _, err := p.auth.Start(p.now.Add(DefaultMICFailureBackoff + 3*time.Second)); err != nil {
		t.Fatalf("after back-off: %v", err)
	}
}

func TestRSNEMismatch(t *testing.T) {
	p := newPair(t, "correct horse", "correct horse", nil)
	p.supp.cfg.RSNE = RSNElementPSKCCMP(0x000c) // differs from the association request's
	m1, _ := p.auth.Start(p.now)
	m2, _, _ := p.supp.Receive(m1)
	if _, ev, err := p.auth.Receive(m2, p.now); ev != EventFailed || !errors.Is(err, ErrRSNEMismatch) {
		t.Fatalf("RSNE mismatch: %b %v", ev, err)
	}
	// A downgraded RSNE in message 3 is refused by the station.
	q := newPair(t, "correct horse", "correct horse", nil)
	q.supp.cfg.APRSNE = RSNElementPSKCCMP(1)
	m1, _ = q.auth.Start(q.now)
	m2, _, _ = q.supp.Receive(m1)
	m3, _, _ := q.auth.Receive(m2, q.now)
	if _, ev, err := q.supp.Receive(m3); ev != EventFailed || !errors.Is(err, ErrRSNEMismatch) {
		t.Fatalf("message 3 RSNE mismatch: %b %v", ev, err)
	}
}

func TestMICGuardBounded(t *testing.T) {
	g := &MICFailureGuard{Stations: 8}
	now := time.Unix(0, 0)
	for i := 0; i < 100; i++ {
		g.Record([6]byte{byte(i)}, now)
	}
	if len(g.m) > 8 {
		t.Fatalf("guard holds %d stations", len(g.m))
	}
}

func TestGroupKeyRingTick(t *testing.T) {
	now := time.Unix(0, 0)
	r, _ := NewGroupKeyRing(10*time.Minute, nil, now)
	first := r.Current()
	if ok, _ := r.Tick(now.Add(9 * time.Minute)); ok {
		t.Fatal("rekeyed early")
	}
	if ok, _ := r.Tick(now.Add(10 * time.Minute)); !ok {
		t.Fatal("no rekey")
	}
	if c := r.Current(); c.KeyID != 2 || c.GTK == first.GTK {
		t.Fatal("rekey did not change key/ID")
	}
}

// handshakeFrames returns the four messages of a handshake and a group
// message 1, as fuzz seeds.
func handshakeFrames(f *testing.F) ([][]byte, *pair) {
	p := newPair(f, "correct horse", "correct horse", nil)
	m1, _ := p.auth.Start(p.now)
	_, _, frames := p.run(f, m1)
	g1, _ := p.auth.RekeyGroup(p.now)
	return append(frames, g1), p
}

func FuzzParseKeyFrame(f *testing.F) {
	frames, p := handshakeFrames(f)
	for _, fr := range frames {
		f.Add(fr)
	}
	kck := p.supp.ptk.KCK
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKeyFrame(b)
		if err != nil {
			return
		}
		// What parses re-marshals to the same octets but the 802.1X
		// body length, which may cover octets after the key data.
		k.Version = b[0]
		if k.Version == 0 {
			return // Marshal writes its own version for 0
		}
		m := k.Marshal()
		if !bytes.Equal(m[:2], b[:2]) || !bytes.Equal(m[4:], b[4:len(m)]) {
			t.Fatalf("re-marshal differs:\n%x\n%x", m, b)
		}
		_ = VerifyKeyFrameMIC(kck[:], b)
		// Feeding it to both state machines never panics.
		a := NewAuthenticator(p.cfg, staAddr, p.cfg.RSNE)
		a.Start(p.now)
		a.Receive(b, p.now)
		NewSupplicant(p.supp.cfg).Receive(b)
	})
}

func FuzzParseKeyData(f *testing.F) {
	f.Add(PadKeyData(AppendGTKKDE(RSNElementPSKCCMP(0), 1, true, bytes.Repeat([]byte{9}, 16))))
	f.Add([]byte{0xdd, 0, 0, 0})
	f.Add([]byte{0x30, 2, 1, 0, 0xdd, 6, 0, 0x0f, 0xac, 1, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		kd, err := ParseKeyData(b)
		if err != nil {
			return
		}
		if kd.GTK != nil && (len(kd.GTK) < 5 || len(kd.GTK) > 32) {
			t.Fatalf("GTK length %d", len(kd.GTK))
		}
		if kd.RSNE != nil && (kd.RSNE[0] != 48 || len(kd.RSNE) != 2+int(kd.RSNE[1])) {
			t.Fatalf("RSNE %x", kd.RSNE)
		}
	})
}
