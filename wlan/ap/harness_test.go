package ap_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

const (
	testSSID       = "gowrt-ap"
	testPassphrase = "correct horse battery"
)

var (
	apAddr = wlan.MAC{0x02, 0, 0, 0, 0x01, 0}
	dsAddr = wlan.MAC{0x02, 0, 0, 0, 0xd5, 1} // a host behind the DS
)

func staAddr(i int) wlan.MAC { return wlan.MAC{0x02, 0, 0, 0, 0x02, byte(i)} }

// tap is a radio that only records what goes over the air, with the
// medium's time of reception.
type tap struct {
	m      *medium.Medium
	frames [][]byte
	times  []time.Time
}

func (t *tap) Receive(f []byte) {
	t.frames = append(t.frames, append([]byte(nil), f...))
	t.times = append(t.times, t.m.Now())
}
func (t *tap) Tick(time.Time) {}

type bss struct {
	m       *medium.Medium
	capture bytes.Buffer
	ap      *ap.AP
	apRadio *wlantest.Radio
	stas    []*sta.Station
	radios  []*wlantest.Radio
	tap     *tap
	toDS    [][]byte
	// discardDS drops what the AP hands to the DS instead of keeping it.
	discardDS bool
	staRx     [][][]byte
}

// newBSS starts an AP and one station per passphrase on a fresh medium.
func newBSS(t testing.TB, cfg ap.Config, passphrases ...string) *bss {
	t.Helper()
	slots := 0
	if cfg.Crypto == ap.CryptoHardware {
		slots = 128 // the AR9300's key cache
	}
	return newBSSSlots(t, cfg, slots, passphrases...)
}

// newBSSSlots is newBSS with a key cache of the given size on the AP's
// radio (0: none).
func newBSSSlots(t testing.TB, cfg ap.Config, slots int, passphrases ...string) *bss {
	t.Helper()
	b := &bss{}
	var err error
	b.m, err = medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0), Seed: 1, Capture: &b.capture})
	if err != nil {
		t.Fatal(err)
	}
	b.tap = &tap{m: b.m}
	b.m.Attach(b.tap)
	cfg.BSSID = apAddr
	if cfg.SSID == "" {
		cfg.SSID = testSSID
	}
	if cfg.Passphrase == "" {
		cfg.Passphrase = testPassphrase
	}
	if cfg.Channel == 0 {
		cfg.Channel = 6
	}
	cfg.ToDS = func(eth []byte) {
		if b.discardDS {
			return // allocation tests and benchmarks
		}
		b.toDS = append(b.toDS, append([]byte(nil), eth...))
	}
	b.ap, err = ap.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.apRadio = wlantest.NewRadio(b.m, wlantest.RadioConfig{Addr: apAddr, KeySlots: slots, Tick: b.ap})
	if err := b.ap.Start(b.apRadio, b.m.Now()); err != nil {
		t.Fatal(err)
	}
	b.staRx = make([][][]byte, len(passphrases))
	for i, pw := range passphrases {
		b.addStation(t, i, pw)
	}
	return b
}

func (b *bss) addStation(t testing.TB, i int, pw string) *sta.Station {
	t.Helper()
	return b.addStationConfig(t, i, sta.Config{Passphrase: pw})
}

func (b *bss) addStationConfig(t testing.TB, i int, cfg sta.Config) *sta.Station {
	t.Helper()
	for len(b.staRx) <= i {
		b.staRx = append(b.staRx, nil)
	}
	cfg.Addr, cfg.SSID = staAddr(i), testSSID
	cfg.Receive = func(eth []byte) { b.staRx[i] = append(b.staRx[i], append([]byte(nil), eth...)) }
	s, err := sta.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	slots := 0
	if cfg.HardwareCrypto {
		slots = 8
	}
	r := wlantest.NewRadio(b.m, wlantest.RadioConfig{Addr: staAddr(i), Tick: s, KeySlots: slots})
	if err := s.Start(r, b.m.Now()); err != nil {
		t.Fatal(err)
	}
	b.stas = append(b.stas, s)
	b.radios = append(b.radios, r)
	return s
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

// ethICMP is an Ethernet frame with an ICMP echo request or reply
// (typ 8 or 0) from 192.168.1.from to 192.168.1.to.
func ethICMP(da, sa wlan.MAC, from, to, typ byte, id uint16) []byte {
	icmp := []byte{typ, 0, 0, 0, byte(id >> 8), byte(id), 0, 1}
	icmp = append(icmp, []byte("gowrt ap test payload...")...)
	binary.BigEndian.PutUint16(icmp[2:], ipChecksum(icmp))
	ip := []byte{0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 1, 0, 0, 192, 168, 1, from, 192, 168, 1, to}
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)+len(icmp)))
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	e := append(append([]byte{}, da[:]...), sa[:]...)
	e = append(e, 0x08, 0x00)
	return append(append(e, ip...), icmp...)
}

// ethARP is a broadcast ARP request from sa (192.168.1.from) for
// 192.168.1.to.
func ethARP(sa wlan.MAC, from, to byte) []byte {
	e := append(append([]byte{}, wlan.Broadcast[:]...), sa[:]...)
	e = append(e, 0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1)
	e = append(e, sa[:]...)
	e = append(e, 192, 168, 1, from, 0, 0, 0, 0, 0, 0, 192, 168, 1, to)
	return e
}
