package wpa_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/pcap"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// An independent check of the whole key hierarchy and of CCMP: Wireshark's
// 802.11 decryption (tshark, Debian package tshark), given only the
// passphrase and SSID, must follow the 4-way handshake our authenticator
// and supplicant exchange, derive the same TK, and decrypt the CCMP data
// frames to the ARP and ICMP inside.

const (
	tsSSID       = "gowrt-wpa"
	tsPassphrase = "correct horse battery"
)

var (
	tsAP  = [6]byte{0x02, 0x00, 0x00, 0x00, 0x01, 0x00}
	tsSTA = [6]byte{0x02, 0x00, 0x00, 0x00, 0x02, 0x00}
)

// pcapWriter collects raw 802.11 frames (LINKTYPE_IEEE802_11, no FCS)
// for tshark, a millisecond apart.
type pcapWriter struct {
	buf bytes.Buffer
	w   *pcap.Writer
	ts  time.Time
	err error
}

func newPcap() *pcapWriter {
	p := &pcapWriter{ts: time.Unix(1_800_000_000, 0)}
	p.w, p.err = pcap.NewWriter(&p.buf, pcap.LinkTypeIEEE80211, 65535)
	return p
}

func (p *pcapWriter) add(frame []byte) {
	p.ts = p.ts.Add(time.Millisecond)
	if p.err == nil {
		p.err = p.w.WritePacket(p.ts, frame)
	}
}

var seq uint16

func hdr(fc0, fc1 byte, a1, a2, a3 [6]byte) []byte {
	seq++
	f := []byte{fc0, fc1, 0, 0}
	f = append(f, a1[:]...)
	f = append(f, a2[:]...)
	f = append(f, a3[:]...)
	return binary.LittleEndian.AppendUint16(f, seq<<4)
}

// beacon: fixed fields, SSID, rates, DS parameter set, RSN element.
func beacon() []byte {
	bcast := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	f := hdr(0x80, 0, bcast, tsAP, tsAP)
	f = append(f, make([]byte, 8)...)   // timestamp
	f = append(f, 0x64, 0x00)           // beacon interval 100 TU
	f = append(f, 0x11, 0x00)           // capability: ESS, Privacy
	f = append(f, 0, byte(len(tsSSID))) // SSID
	f = append(f, tsSSID...)
	f = append(f, 1, 8, 0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24)
	f = append(f, 3, 1, 6)
	return append(f, wpa.RSNElementPSKCCMP(0)...)
}

var llcEAPOL = []byte{0xaa, 0xaa, 0x03, 0, 0, 0, 0x88, 0x8e}

// eapolFrame wraps an EAPOL frame in a data frame, from the AP (FromDS)
// or from the station (ToDS).
func eapolFrame(fromAP bool, eapol []byte) []byte {
	var f []byte
	if fromAP {
		f = hdr(0x08, 0x02, tsSTA, tsAP, tsAP)
	} else {
		f = hdr(0x08, 0x01, tsAP, tsSTA, tsAP)
	}
	return append(append(f, llcEAPOL...), eapol...)
}

func ipChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// arpBody is LLC/SNAP + an ARP request from the station.
func arpBody() []byte {
	b := []byte{0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x06}
	b = append(b, 0, 1, 0x08, 0, 6, 4, 0, 1)
	b = append(b, tsSTA[:]...)
	b = append(b, 192, 168, 1, 100)
	b = append(b, make([]byte, 6)...)
	return append(b, 192, 168, 1, 1)
}

// icmpBody is LLC/SNAP + IPv4 + ICMP echo request.
func icmpBody(from, to byte) []byte {
	icmp := []byte{8, 0, 0, 0, 0x12, 0x34, 0, 1}
	icmp = append(icmp, []byte("gowrt ccmp ping payload.")...)
	binary.BigEndian.PutUint16(icmp[2:], ipChecksum(icmp))
	ip := []byte{0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 1, 0, 0, 192, 168, 1, from, 192, 168, 1, to}
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)+len(icmp)))
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	b := []byte{0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00}
	return append(append(b, ip...), icmp...)
}

// protect encrypts a plaintext MPDU with key k.
func protect(t *testing.T, k *ccmp.Key, plain []byte) []byte {
	buf := make([]byte, len(plain), len(plain)+ccmp.Overhead)
	copy(buf, plain)
	out, err := k.Encap(buf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// capture runs the handshake and writes the pcap. corrupt names what to
// break: "" nothing, "tk" a TK byte for the data frames, "kck" a KCK byte
// for the supplicant's MICs.
func capture(t *testing.T, corrupt string) (path string, tk [16]byte) {
	now := time.Unix(1_800_000_000, 0)
	pmk, err := wpa.PSK(tsPassphrase, []byte(tsSSID))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := wpa.NewGroupKeyRing(0, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	rsne := wpa.RSNElementPSKCCMP(0)
	auth := wpa.NewAuthenticator(&wpa.AuthenticatorConfig{PMK: pmk, AA: tsAP, RSNE: rsne, Group: ring.Current}, tsSTA, rsne)
	suppPMK := pmk
	supp := wpa.NewSupplicant(&wpa.SupplicantConfig{PMK: suppPMK, SPA: tsSTA, AA: tsAP, RSNE: rsne, APRSNE: rsne})

	w := newPcap()
	w.add(beacon())
	m1, err := auth.Start(now)
	if err != nil {
		t.Fatal(err)
	}
	w.add(eapolFrame(true, m1))
	m2, _, err := supp.Receive(m1)
	if err != nil {
		t.Fatal(err)
	}
	if corrupt == "kck" {
		// The capture gets a copy of message 2 whose MIC was made with
		// a wrong KCK, what a broken PRF or MIC would produce; the AP
		// gets the good one, so the rest of the capture is unchanged.
		// Wireshark must not accept the handshake.
		bad := append([]byte{}, m2...)
		ptkBad := wpa.DerivePTK(&pmk, tsAP, tsSTA, (*[32]byte)(m1[17:49]), (*[32]byte)(m2[17:49]))
		ptkBad.KCK[0] ^= 1
		wpa.SignKeyFrame(ptkBad.KCK[:], bad)
		if _, _, err := auth.Receive(bad, now); err == nil {
			t.Fatal("authenticator accepted a message 2 with a wrong MIC")
		}
		w.add(eapolFrame(false, bad))
	} else {
		w.add(eapolFrame(false, m2))
	}
	m3, _, err := auth.Receive(m2, now)
	if err != nil {
		t.Fatal(err)
	}
	w.add(eapolFrame(true, m3))
	m4, ev, err := supp.Receive(m3)
	if err != nil || ev&wpa.EventPTK == 0 {
		t.Fatal(err, ev)
	}
	w.add(eapolFrame(false, m4))
	if _, ev, err := auth.Receive(m4, now); err != nil || ev&wpa.EventPTK == 0 {
		t.Fatal(err, ev)
	}
	ptk, _ := auth.PTK()
	tk = ptk.TK
	keyBytes := ptk.TK
	if corrupt == "tk" {
		keyBytes[5] ^= 0x40
	}
	staKey, _ := ccmp.NewKey(keyBytes[:], 0)
	apKey, _ := ccmp.NewKey(keyBytes[:], 0)

	// Station → AP: a non-QoS data frame with ARP, a QoS data frame
	// (TID 5) with ICMP; AP → station: ICMP.
	w.add(protect(t, staKey, append(hdr(0x08, 0x01, tsAP, tsSTA, tsAP), arpBody()...)))
	qos := append(hdr(0x88, 0x01, tsAP, tsSTA, tsAP), 5, 0)
	w.add(protect(t, staKey, append(qos, icmpBody(100, 1)...)))
	w.add(protect(t, apKey, append(hdr(0x08, 0x02, tsSTA, tsAP, tsAP), icmpBody(1, 100)...)))

	p := filepath.Join(t.TempDir(), "wpa.pcap")
	if w.err != nil {
		t.Fatal(w.err)
	}
	if err := os.WriteFile(p, w.buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, tk
}

// tsharkFields runs tshark with the passphrase and returns one row of
// fields per frame.
func tsharkFields(t *testing.T, pcap string) [][]string {
	args := []string{
		"-o", "wlan.enable_decryption:TRUE",
		"-o", `uat:80211_keys:"wpa-pwd","` + tsPassphrase + ":" + tsSSID + `"`,
		"-r", pcap, "-T", "fields", "-E", "separator=|",
		"-e", "frame.number", "-e", "wlan_rsna_eapol.keydes.key_info",
		"-e", "wlan.fc.protected", "-e", "_ws.col.Protocol",
		"-e", "wlan.analysis.tk", "-e", "arp.opcode", "-e", "icmp.type",
	}
	cmd := exec.Command("tshark", args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no user preferences
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("tshark %s\n%s", strings.Join(args, " "), out)
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		rows = append(rows, strings.Split(l, "|"))
	}
	return rows
}

func TestTsharkDecrypts(t *testing.T) {
	p, tk := capture(t, "")
	rows := tsharkFields(t, p)
	if len(rows) != 8 {
		t.Fatalf("%d frames, want 8", len(rows))
	}
	// Frames 2..5: the handshake, with the key info of messages 1..4.
	for i, ki := range []string{"0x008a", "0x010a", "0x13ca", "0x030a"} {
		r := rows[1+i]
		if r[1] != ki || r[3] != "EAPOL" {
			t.Errorf("frame %s: key info %q protocol %q, want %s EAPOL", r[0], r[1], r[3], ki)
		}
	}
	// Wireshark derived the same TK from passphrase, SSID and nonces.
	var sawTK bool
	for _, r := range rows {
		if r[4] != "" {
			sawTK = true
			if r[4] != hex.EncodeToString(tk[:]) {
				t.Errorf("frame %s: Wireshark's TK %s, ours %x", r[0], r[4], tk)
			}
		}
	}
	if !sawTK {
		t.Error("Wireshark derived no TK")
	}
	// Frames 6..8: protected, decrypted to ARP and ICMP echo requests.
	want := []struct{ proto, arp, icmp string }{{"ARP", "1", ""}, {"ICMP", "", "8"}, {"ICMP", "", "8"}}
	for i, w := range want {
		r := rows[5+i]
		if r[2] != "1" || r[3] != w.proto || r[5] != w.arp || r[6] != w.icmp {
			t.Errorf("frame %s: protected %q protocol %q arp %q icmp %q, want 1 %s %q %q",
				r[0], r[2], r[3], r[5], r[6], w.proto, w.arp, w.icmp)
		}
	}
}

// The check above can fail: a wrong TK leaves the data frames opaque, and
// a wrong MIC in message 2 stops Wireshark from using the handshake.
func TestTsharkRejectsBrokenCrypto(t *testing.T) {
	t.Run("tk", func(t *testing.T) {
		p, _ := capture(t, "tk")
		for _, r := range tsharkFields(t, p)[5:] {
			if r[3] == "ARP" || r[3] == "ICMP" || r[5] != "" || r[6] != "" {
				t.Errorf("frame %s decrypted with a wrong TK: %v", r[0], r)
			}
		}
	})
	t.Run("kck", func(t *testing.T) {
		p, _ := capture(t, "kck")
		rows := tsharkFields(t, p)
		if len(rows) != 8 {
			t.Fatalf("%d frames", len(rows))
		}
		for _, r := range rows {
			if r[4] != "" || r[3] == "ARP" || r[3] == "ICMP" {
				t.Errorf("frame %s: Wireshark used a handshake with a bad MIC: %v", r[0], r)
			}
		}
	})
}
