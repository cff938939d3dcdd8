package firmware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/config/cfg"
	"github.com/gowrt/gowrt/net/router"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/radio"
)

// Wi-Fi: on a board with radios (board.Wireless), one access point
// (wlan/ap) per radio, configured by the wireless package: the radio's
// wifi-device (channel, band, disabled) and the first wifi-iface on it in
// mode ap on network lan (SSID, encryption none or psk2 with its key,
// hidden, crypto placement, disabled). The AP's Ethernet side (ap.NIC) is
// a port of br-lan, "wlan0" for radio0 and so on, so stations get their
// lease from the router's DHCP server and reach the LAN. The port exists
// whether or not the AP runs: a disabled AP does not beacon and its port
// has no link. A committed change reconfigures the AP at once, which
// deauthenticates every station.

// svcWifi is the service that runs the APs' timers.
const svcWifi = "wifi"

// wifiTick is how often the APs' timers run: handshake retransmissions
// (1 s), GTK rekeying, inactivity and power-save ageing all work in
// seconds, so a tenth of one is plenty.
const wifiTick = 100 * time.Millisecond

// placeholderSSID names the network of an AP whose configuration cannot
// be built (it never runs with it: the AP stays stopped).
const placeholderSSID = "gowrt"

// wifiAP is one radio and its access point.
type wifiAP struct {
	radio board.Radio
	port  string // br-lan port name
	ap    *ap.AP
	// set is the configuration applied; started: the AP has been
	// started on the radio once; running: it beacons now.
	set     apSettings
	started bool
	running bool
}

// apSettings is what the configuration decides for one AP.
type apSettings struct {
	enabled bool
	ssid    string
	key     string
	open    bool
	hidden  bool
	crypto  ap.CryptoPlacement
	channel radio.Channel
	// ht is the HT configuration, used when htOn (htmode is not NOHT);
	// values, not a pointer, so settings compare with ==.
	ht   ap.HTConfig
	htOn bool
}

// wifiSettings reads radio r's AP settings from the snapshot; enabled is
// false (with the reason) when the radio or its interface is disabled or
// absent.
func wifiSettings(s *cfg.Snapshot, r board.Radio) (apSettings, string) {
	var st apSettings
	var dev *cfg.Radio
	for i := range s.Wireless.Radios {
		if s.Wireless.Radios[i].Name == r.Name {
			dev = &s.Wireless.Radios[i]
		}
	}
	if dev == nil {
		return st, "no wifi-device section"
	}
	var iface *cfg.WifiIface
	for i := range s.Wireless.Ifaces {
		w := &s.Wireless.Ifaces[i]
		if w.Device == r.Name && w.Mode == "ap" && (w.Network == "" || w.Network == "lan") {
			iface = w
			break
		}
	}
	if iface == nil {
		return st, "no wifi-iface in mode ap on network lan"
	}
	st.ssid, st.key, st.hidden = iface.SSID, iface.Key, iface.Hidden
	st.open = iface.Encryption == "" || iface.Encryption == "none"
	if iface.Crypto == "hardware" {
		st.crypto = ap.CryptoHardware
	}
	st.channel = radio.Channel{Number: uint8(dev.Channel), Band5G: dev.Band == "5g"}
	if st.channel.Number == 0 {
		// channel auto: no survey yet; the first channel of the band
		// (OpenWrt's default for 2g is 1; 36 is 5 GHz's first).
		st.channel.Number = 1
		if st.channel.Band5G {
			st.channel.Number = 36
		}
	}
	st.ht, st.htOn = htConfig(dev.HTMode, &st.channel)
	switch {
	case dev.Disabled:
		return st, "wifi-device disabled"
	case iface.Disabled:
		return st, "wifi-iface disabled"
	case st.channel.Band5G != r.Band5G:
		return st, fmt.Sprintf("wifi-device band %s, but the radio is %s", dev.Band, bandName(r.Band5G))
	}
	st.enabled = true
	return st, ""
}

// htConfig maps OpenWrt's htmode onto the AP's HT configuration and the
// channel's width: NOHT is legacy only; HT20 (and the VHT/HE 20 MHz modes,
// served as HT: the AP has no VHT) is 20 MHz; every 40 MHz and wider mode
// is HT40, with the secondary channel as htmode says (HT40+ above, HT40-
// below) or, for plain HT40 and the wider modes, the usual pairing: on
// 2.4 GHz above for channels 1–7 and below from 8 (802.11-2016 Annex E,
// where 40 MHz pairs must stay inside the band), on 5 GHz the pairs
// 36/40, 44/48, …, 149/153, … (the lower channel of a pair has its
// secondary above). Short guard interval and two spatial streams are the
// AR934x/QCA955x WMACs' minimum.
func htConfig(mode string, ch *radio.Channel) (ap.HTConfig, bool) {
	if mode == "NOHT" {
		return ap.HTConfig{}, false
	}
	c := ap.HTConfig{SGI: true, Streams: 2}
	switch mode {
	case "", "HT20", "VHT20", "HE20":
		return c, true
	case "HT40+":
		c.Above = true
	case "HT40-":
		c.Above = false
	default: // HT40, VHT40/80/160, HE40/80/160
		if ch.Band5G {
			base := uint8(36)
			if ch.Number >= 149 {
				base = 149
			}
			c.Above = (ch.Number-base)/4%2 == 0
		} else {
			c.Above = ch.Number <= 7
		}
	}
	c.Width40 = true
	ch.Width40, ch.Above = true, c.Above
	return c, true
}

func bandName(five bool) string {
	if five {
		return "5 GHz"
	}
	return "2.4 GHz"
}

func (st apSettings) apConfig(bssid [6]byte) ap.Config {
	c := ap.Config{BSSID: bssid, SSID: st.ssid, Passphrase: st.key, Open: st.open, Hidden: st.hidden,
		Crypto: st.crypto, Channel: st.channel.Number}
	if st.htOn {
		ht := st.ht
		c.HT = &ht
	}
	if c.SSID == "" {
		c.SSID, c.Open = placeholderSSID, true
	}
	return c
}

// startWireless builds an AP per board radio and returns their br-lan
// ports. Nothing is started yet: wifiStart starts the enabled ones once
// the router runs.
func (f *Firmware) startWireless(snap *cfg.Snapshot) ([]router.Port, error) {
	wb, ok := f.opts.Board.(board.Wireless)
	if !ok {
		return nil, nil
	}
	rs, err := wb.Radios()
	if err != nil {
		f.log.Error("wireless: radios: " + err.Error())
		return nil, nil // Wi-Fi is down; the wired router still runs
	}
	var ports []router.Port
	for i, r := range rs {
		w := &wifiAP{radio: r, port: fmt.Sprintf("wlan%d", i)}
		st, why := wifiSettings(snap, r)
		a, err := ap.New(st.apConfig(r.Radio.Address()))
		if err != nil {
			f.log.Error(fmt.Sprintf("wireless.%s: %v; the AP stays off", r.Name, err))
			st.enabled = false
			if a, err = ap.New(apSettings{}.apConfig(r.Radio.Address())); err != nil {
				return nil, fmt.Errorf("firmware: %s: %w", r.Name, err)
			}
		} else if !st.enabled {
			f.log.Info(fmt.Sprintf("wireless.%s: %s; the AP is off", r.Name, why))
		}
		w.ap, w.set = a, st
		f.wifi = append(f.wifi, w)
		ports = append(ports, router.Port{Name: w.port, NIC: a.NIC()})
	}
	return ports, nil
}

// wifiStart starts the enabled APs (after the router started their
// ports) with the configuration the router runs (the defaults, if the
// stored one failed).
func (f *Firmware) wifiStart(snap *cfg.Snapshot) {
	if err := f.applyWireless(snap); err != nil {
		f.log.Error(err.Error())
	}
}

// wifiUp tunes the radio and starts (or restarts) the AP with w.set.
func (f *Firmware) wifiUp(w *wifiAP, now time.Time) {
	r := w.radio
	if err := r.Radio.SetChannel(w.set.channel); err != nil {
		f.log.Error(fmt.Sprintf("wireless.%s: channel %d: %v", r.Name, w.set.channel.Number, err))
		return
	}
	var err error
	if w.started {
		err = w.ap.Reconfigure(w.set.apConfig(r.Radio.Address()), now)
	} else {
		err = w.ap.Start(r.Radio, now)
	}
	if err != nil {
		f.log.Error(fmt.Sprintf("wireless.%s: start: %v", r.Name, err))
		w.running = false
		return
	}
	w.started, w.running = true, true
	enc := "psk2 (" + w.set.crypto.String() + " CCMP)"
	if w.set.open {
		enc = "none"
	}
	f.log.Info(fmt.Sprintf("wireless.%s: AP %q on channel %d, encryption %s, port %s", r.Name, w.set.ssid, w.set.channel.Number, enc, w.port))
}

// applyWireless brings each AP in line with the snapshot: a changed
// configuration restarts the AP (every station deauthenticated), a
// disabled one stops it.
func (f *Firmware) applyWireless(snap *cfg.Snapshot) error {
	f.wifiMu.Lock()
	defer f.wifiMu.Unlock()
	var errs []error
	now := time.Now()
	for _, w := range f.wifi {
		st, why := wifiSettings(snap, w.radio)
		if st == w.set && w.running == st.enabled {
			continue
		}
		if st.enabled {
			// A new configuration is checked before anything stops: one
			// the AP refuses leaves the running one alone. (The AP
			// derives the PSK in New, 4096 PBKDF2 rounds: not twice
			// for the settings it was built with.)
			if st != w.set {
				if _, err := ap.New(st.apConfig(w.radio.Radio.Address())); err != nil {
					errs = append(errs, fmt.Errorf("wireless.%s: %w", w.radio.Name, err))
					continue
				}
			}
			if !w.started && st != w.set {
				// The AP was built with other settings (a placeholder,
				// or a configuration since changed): it takes the new
				// ones without a radio to restart on.
				if err := w.ap.Reconfigure(st.apConfig(w.radio.Radio.Address()), now); err != nil {
					errs = append(errs, fmt.Errorf("wireless.%s: %w", w.radio.Name, err))
					continue
				}
			}
			w.set = st
			f.wifiUp(w, now)
			continue
		}
		w.set = st
		if w.running {
			w.ap.Stop()
			w.running = false
			f.log.Info(fmt.Sprintf("wireless.%s: %s; the AP stopped", w.radio.Name, why))
		}
	}
	return errors.Join(errs...)
}

// runWifi runs the APs' timers.
func (f *Firmware) runWifi(ctx context.Context) error {
	t := time.NewTicker(wifiTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			for _, w := range f.wifi {
				w.ap.Tick(now)
			}
		}
	}
}

// stopWireless stops the APs and their radios.
func (f *Firmware) stopWireless() {
	f.wifiMu.Lock()
	defer f.wifiMu.Unlock()
	for _, w := range f.wifi {
		if w.running {
			w.ap.Stop()
			w.running = false
		}
		if w.started {
			w.radio.Radio.Stop()
		}
	}
}

// APs returns the access points by radio name, for the shell and tests.
func (f *Firmware) APs() map[string]*ap.AP {
	m := map[string]*ap.AP{}
	for _, w := range f.wifi {
		m[w.radio.Name] = w.ap
	}
	return m
}

// wifiStats writes each AP's athstats view (Block Ack agreements, rate
// control, aggregate sizes, retries) under its radio's name: the shell's
// athstats command and the status page's Wi-Fi section.
func (f *Firmware) wifiStats(w io.Writer) error {
	f.wifiMu.Lock()
	aps := make([]*wifiAP, len(f.wifi))
	copy(aps, f.wifi)
	f.wifiMu.Unlock()
	if len(aps) == 0 {
		_, err := fmt.Fprintln(w, "no radios")
		return err
	}
	for _, a := range aps {
		if _, err := fmt.Fprintf(w, "%s (%s):\n", a.radio.Name, a.port); err != nil {
			return err
		}
		if err := a.ap.WriteStats(w); err != nil {
			return err
		}
	}
	return nil
}
