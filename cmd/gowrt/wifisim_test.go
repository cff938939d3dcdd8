package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWifiSimTshark runs gowrt wifisim with three WPA2 stations, CCMP in
// software and in the key caches, and has tshark, given only the
// passphrase and SSID, check the capture: the 4-way handshake of every
// station (all four messages, which tshark must follow to derive the
// keys) and every station's pings and the replies decrypted, with valid
// ICMP checksums. With a wrong passphrase it decrypts nothing.
func TestWifiSimTshark(t *testing.T) {
	for _, hw := range []bool{false, true} {
		t.Run(fmt.Sprintf("hw-crypto=%v", hw), func(t *testing.T) {
			const ssid, pass, k = "wifisim test", "sim passphrase", 3
			p := filepath.Join(t.TempDir(), "air.pcap")
			args := []string{"wifisim", "-ssid", ssid, "-passphrase", pass, "-stations", fmt.Sprint(k), "-duration", "2s", "-pcap", p}
			if hw {
				args = append(args, "-hw-crypto")
			}
			var out, errb bytes.Buffer
			code, err := dispatch(args, &out, &errb)
			if err != nil || code != 0 {
				t.Fatalf("wifisim: code %d, %v\n%s%s", code, err, out.String(), errb.String())
			}
			t.Log(strings.TrimSpace(out.String()))

			home := t.TempDir()
			tshark := func(pw string) []string {
				cmd := exec.Command("tshark", "-o", "wlan.enable_decryption:TRUE", "-o", `uat:80211_keys:"wpa-pwd","`+pw+":"+ssid+`"`,
					"-r", p, "-T", "fields", "-E", "separator=|", "-e", "wlan.sa", "-e", "wlan.da",
					"-e", "wlan_rsna_eapol.keydes.key_info", "-e", "icmp.type", "-e", "icmp.checksum.status")
				cmd.Env = append(os.Environ(), "HOME="+home)
				o, err := cmd.Output()
				if err != nil {
					t.Fatalf("tshark: %v\n%s", err, o)
				}
				return strings.Split(strings.TrimSpace(string(o)), "\n")
			}
			seen := map[string]int{}
			for _, l := range tshark(pass) {
				f := strings.Split(l, "|")
				if len(f) != 5 {
					continue
				}
				if f[2] != "" {
					seen["eapol "+f[2]+" "+f[0]+">"+f[1]]++
				}
				if f[3] != "" {
					if f[4] != "1" {
						t.Errorf("ICMP %s>%s with checksum status %q", f[0], f[1], f[4])
					}
					seen["icmp"+f[3]+" "+f[0]+">"+f[1]]++
				}
			}
			bssid, gw := simBSSID.String(), simGateway.String()
			for i := 0; i < k; i++ {
				s := simStationMAC(i).String()
				// Key Information of messages 1 to 4 (WPA2, AES-CCMP).
				for _, want := range []string{"eapol 0x008a " + bssid + ">" + s, "eapol 0x010a " + s + ">" + bssid,
					"eapol 0x13ca " + bssid + ">" + s, "eapol 0x030a " + s + ">" + bssid,
					"icmp8 " + s + ">" + gw, "icmp0 " + gw + ">" + s} {
					if seen[want] == 0 {
						t.Errorf("tshark saw no %q", want)
					}
				}
			}
			if t.Failed() {
				t.Logf("tshark saw %v", seen)
			}
			for _, l := range tshark("a wrong passphrase") {
				if f := strings.Split(l, "|"); len(f) == 5 && f[3] != "" {
					t.Fatalf("tshark decrypted ICMP with a wrong passphrase: %s", l)
				}
			}
		})
	}
}

// TestWifiSimOpenAndErrors: an open network carries the pings in the
// clear; bad settings are refused with the reason.
func TestWifiSimOpenAndErrors(t *testing.T) {
	var pcap bytes.Buffer
	res, err := runWifiSim(wifiSimConfig{SSID: "open", Stations: 2, Duration: time.Second, Seed: 2, Pcap: &pcap})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Authorized {
		if !res.Authorized[i] || res.Replies[i] == 0 || res.Replies[i] > res.Pings[i] {
			t.Errorf("station %d: authorized %v, %d pings, %d replies", i+1, res.Authorized[i], res.Pings[i], res.Replies[i])
		}
	}
	for _, c := range []struct {
		cfg  wifiSimConfig
		want string
	}{
		{wifiSimConfig{SSID: "x", Passphrase: "short", Stations: 1, Duration: time.Second}, "passphrase"},
		{wifiSimConfig{SSID: strings.Repeat("s", 33), Stations: 1, Duration: time.Second}, "SSID"},
		{wifiSimConfig{SSID: "x", Stations: 0, Duration: time.Second}, "0 stations"},
		{wifiSimConfig{SSID: "x", Stations: 65, Duration: time.Second}, "65 stations"},
	} {
		if _, err := runWifiSim(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about %s", c.cfg, err, c.want)
		}
	}
	if code, err := dispatch([]string{"wifisim", "-stations", "2"}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 || err == nil {
		t.Errorf("without -pcap: %d, %v", code, err)
	}
}
