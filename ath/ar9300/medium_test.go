package ar9300_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
)

// node is a driver and its chip model as one wlan/medium device: the
// chip's clock follows the medium's, and the board's interrupt handler
// runs after every tick.
type node struct{ r *rig }

func (n node) Receive(f []byte) { n.r.mac.Receive(f) }
func (n node) Tick(now time.Time) {
	n.r.now = now
	n.r.mac.Tick(now)
	n.r.settle()
}

// TestOverMedium: two AR9300s (driver + model) on the simulated medium.
// The AP beacons; each side has the other's pairwise key in its key
// cache; the AP sends CCMP frames the chip encrypts, the station's chip
// decrypts them, and back. tshark, given only the TK, decrypts the
// capture: the chip model's CCMP is the standard's.
func TestOverMedium(t *testing.T) {
	var capture bytes.Buffer
	m, err := medium.New(medium.Config{Start: epoch, Seed: 1, Capture: &capture})
	if err != nil {
		t.Fatal(err)
	}
	ap := newRig(t, rigOpts{seed: 51})
	sta := newRigMAC(t, rigOpts{seed: 52}, peerMAC)
	ap.mac.SetAir(m.Attach(node{ap}))
	sta.mac.SetAir(m.Attach(node{sta}))
	tk := [16]byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01}
	if err := ap.drv.Install(4, peerMAC, 0, tk, 1); err != nil {
		t.Fatal(err)
	}
	if err := sta.drv.Install(4, apMAC, 0, tk, 1); err != nil {
		t.Fatal(err)
	}
	if err := ap.drv.SetBeacon(beaconFrame(7), 100); err != nil {
		t.Fatal(err)
	}
	var dn done
	var bodies [][]byte
	for i := 0; i < 3; i++ {
		body := append([]byte{0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x06}, payload(28, byte(i))...) // LLC/SNAP ARP-sized
		bodies = append(bodies, body)
		f := ap.dmaFrame(qosData(peerMAC, apMAC, uint16(i), body, true))
		if err := ap.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(2), Key: 4, Done: dn.fn}); err != nil {
			t.Fatal(err)
		}
		up := qosData(apMAC, peerMAC, uint16(i), body, true)
		up[1] = 0x41 // ToDS, protected
		copy(up[16:22], apMAC[:])
		if err := sta.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{sta.dmaFrame(up)}, Series: sched(2), Key: 4, Done: dn.fn}); err != nil {
			t.Fatal(err)
		}
		m.Run(20 * time.Millisecond)
	}
	m.Run(300 * time.Millisecond)
	if dn.n != 6 {
		t.Fatalf("%d of 6 transmissions done", dn.n)
	}
	var data, beacons int
	for _, g := range sta.got {
		switch g.frame[0] {
		case 0x80:
			beacons++
		case 0x88:
			if !g.st.Decrypted {
				t.Fatalf("station: frame not decrypted by the chip: %+v", g.st)
			}
			expectEqual(t, "station received", g.frame[34:], bodies[data])
			data++
		}
	}
	if data != 3 || beacons != 3 {
		t.Fatalf("station got %d data frames and %d beacons", data, beacons)
	}
	if len(ap.got) != 3 || !ap.got[0].st.Decrypted {
		t.Fatalf("AP got %d frames", len(ap.got))
	}

	pcap := filepath.Join(t.TempDir(), "ath.pcap")
	if err := os.WriteFile(pcap, capture.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-o", "wlan.enable_decryption:TRUE",
		"-o", `uat:80211_keys:"tk","` + hex.EncodeToString(tk[:]) + `"`,
		"-r", pcap, "-T", "fields", "-E", "separator=|",
		"-e", "wlan.fc.type_subtype", "-e", "wlan.fc.protected", "-e", "llc.type", "-e", "data.data"}
	cmd := exec.Command("tshark", args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	var tb, td int
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "|")
		switch {
		case f[0] == "8" || f[0] == "0x0008":
			tb++
		case (f[0] == "40" || f[0] == "0x0028") && f[2] == "0x0806":
			td++
		}
	}
	if tb != 3 || td != 6 {
		t.Fatalf("tshark saw %d beacons and decrypted %d of 6 data frames:\n%s", tb, td, out)
	}
}

// newRigMAC is newRig with another station address.
func newRigMAC(t *testing.T, o rigOpts, mac [6]byte) *rig {
	o.mac = mac
	return newRig(t, o)
}
