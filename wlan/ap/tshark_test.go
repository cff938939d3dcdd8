package ap_test

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// THE INDEPENDENT CHECK: Wireshark's 802.11 dissector and decryption
// (tshark, Debian package tshark) read the medium's capture of the
// two-station exchange. Given the passphrase and SSID it must see the
// beacons with the SSID, both stations' 4-way handshakes, and decrypt
// every CCMP data frame to the ARP and ICMP inside; given a wrong
// passphrase it must decrypt nothing.

const tsharkFieldsCount = 9

func tshark(t *testing.T, pcap, passphrase string) [][]string {
	t.Helper()
	args := []string{
		"-o", "wlan.enable_decryption:TRUE",
		"-o", `uat:80211_keys:"wpa-pwd","` + passphrase + ":" + testSSID + `"`,
		"-r", pcap, "-T", "fields", "-E", "separator=|",
		"-e", "frame.number", "-e", "wlan.fc.type_subtype", "-e", "wlan.ssid",
		"-e", "wlan.sa", "-e", "wlan_rsna_eapol.keydes.key_info",
		"-e", "wlan.fc.protected", "-e", "_ws.col.Protocol",
		"-e", "arp.opcode", "-e", "icmp.type",
	}
	cmd := exec.Command("tshark", args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no user preferences
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		r := strings.Split(l, "|")
		if len(r) != tsharkFieldsCount {
			t.Fatalf("tshark row %q", l)
		}
		rows = append(rows, r)
	}
	return rows
}

func TestTsharkReadsCapture(t *testing.T) {
	b := exchange(t)
	p := filepath.Join(t.TempDir(), "ap.pcap")
	if err := os.WriteFile(p, b.capture.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := os.ReadFile(p); err != nil || len(out) == 0 {
		t.Fatal(err)
	}

	rows := tshark(t, p, testPassphrase)
	var beacons, protected, arp, icmp int
	keyInfos := map[string][]string{} // station address → key info sequence
	for _, r := range rows {
		switch {
		case r[1] == "0x0008": // beacon
			beacons++
			// tshark prints wlan.ssid as hex in field output.
			if r[2] != hex.EncodeToString([]byte(testSSID)) {
				t.Errorf("frame %s: beacon SSID %q", r[0], r[2])
			}
		case r[4] != "":
			sta := r[3]
			if sta == apAddr.String() {
				// From the AP: attribute to the receiver by order.
				sta = "ap"
			}
			keyInfos[sta] = append(keyInfos[sta], r[4])
		}
		if r[5] == "1" {
			protected++
			switch {
			case r[6] == "ARP" && r[7] == "1":
				arp++
			case r[6] == "ICMP" && (r[8] == "8" || r[8] == "0"):
				icmp++
			default:
				t.Errorf("frame %s: protected frame not decrypted to ARP/ICMP: %v", r[0], r)
			}
		}
	}
	if beacons < 10 {
		t.Errorf("%d beacons", beacons)
	}
	// Messages 1 and 3 from the AP, 2 and 4 from each station, with the
	// key info bits of WPA2 (as in wlan/wpa's tshark test).
	for _, s := range []string{staAddr(0).String(), staAddr(1).String()} {
		if got := strings.Join(keyInfos[s], ","); got != "0x010a,0x030a" {
			t.Errorf("station %s sent key info %s, want messages 2 and 4", s, got)
		}
	}
	if got := strings.Join(keyInfos["ap"], ","); got != "0x008a,0x13ca,0x008a,0x13ca" && got != "0x008a,0x008a,0x13ca,0x13ca" {
		t.Errorf("AP sent key info %s, want messages 1 and 3 twice", got)
	}
	// Over the air: ICMP station 0→AP (to the DS) and AP→station 0
	// (from the DS); ICMP 0→1 and 1→0, each twice (station→AP, AP
	// relaying); ARP station 1→AP and the AP's broadcast copy.
	if protected != 8 || icmp != 6 || arp != 2 {
		t.Errorf("protected %d, icmp %d, arp %d; want 8, 6, 2", protected, icmp, arp)
	}

	// With the wrong passphrase nothing decrypts.
	for _, r := range tshark(t, p, "wrong horse battery") {
		if r[6] == "ARP" || r[6] == "ICMP" || r[7] != "" || r[8] != "" {
			t.Errorf("frame %s decrypted with a wrong passphrase: %v", r[0], r)
		}
	}
	if t.Failed() {
		out, _ := exec.Command("tshark", "-o", "wlan.enable_decryption:TRUE",
			"-o", `uat:80211_keys:"wpa-pwd","`+testPassphrase+":"+testSSID+`"`, "-r", p).CombinedOutput()
		t.Logf("%s", out)
	}
}
