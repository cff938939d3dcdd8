package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/sta"
)

// gowrt wifisim: an access point and K stations on the simulated medium
// (wlan/medium, on its virtual clock: the run takes as long as the
// computer needs, not -duration), with traffic, every frame on the air
// written to a radiotap pcap that Wireshark decrypts given the SSID and
// passphrase.
//
// The traffic: behind the AP, on its distribution system, a host at
// 192.168.1.1 that answers ARP and ICMP echo; each station, once
// authorized, resolves it with ARP and pings it every 100 ms.

// wifiSimConfig is one run.
type wifiSimConfig struct {
	SSID, Passphrase string // no passphrase: an open network
	Stations         int
	Duration         time.Duration
	Hardware         bool // CCMP in the radios' key caches
	Seed             uint64
	Pcap             io.Writer
}

// wifiSimResult is what happened, per station.
type wifiSimResult struct {
	Authorized []bool
	Pings      []int // echo requests sent
	Replies    []int // echo replies received
}

// Addresses of the simulated network.
var (
	simBSSID   = wlan.MAC{0x02, 0x67, 0x77, 0x5a, 0, 0}
	simGateway = wlan.MAC{0x02, 0x67, 0x77, 0x5a, 0xff, 0xfe}
	simGWIP    = [4]byte{192, 168, 1, 1}
)

func simStationMAC(i int) wlan.MAC { return wlan.MAC{0x02, 0x67, 0x77, 0x5a, 0, byte(i + 1)} }
func simStationIP(i int) [4]byte   { return [4]byte{192, 168, 1, byte(100 + i)} }

// maxSimStations bounds -stations (an address byte each, and the AP's
// default station table).
const maxSimStations = 64

// pingInterval is how often each station pings the gateway.
const pingInterval = 100 * time.Millisecond

func runWifiSim(c wifiSimConfig) (*wifiSimResult, error) {
	if c.Stations < 1 || c.Stations > maxSimStations {
		return nil, fmt.Errorf("wifisim: %d stations (1..%d)", c.Stations, maxSimStations)
	}
	if c.Duration <= 0 {
		return nil, fmt.Errorf("wifisim: duration %v", c.Duration)
	}
	open := c.Passphrase == ""
	m, err := medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0), Seed: c.Seed, Capture: c.Pcap, PHY: airtime.TwoGHz(true)})
	if err != nil {
		return nil, err
	}
	ch := radio.Channel{Number: 6}
	place := ap.CryptoSoftware
	if c.Hardware {
		place = ap.CryptoHardware
	}
	a, err := ap.New(ap.Config{BSSID: simBSSID, SSID: c.SSID, Passphrase: c.Passphrase, Open: open, Channel: ch.Number, Crypto: place})
	if err != nil {
		return nil, fmt.Errorf("wifisim: %w", err)
	}
	ar, err := m.NewRadio(medium.RadioConfig{Addr: simBSSID, Channel: ch})
	if err != nil {
		return nil, err
	}
	gw := &simGatewayHost{ap: a}
	a.SetToDS(gw.receive)
	m.AddTicker(a)
	if err := a.Start(ar, m.Now()); err != nil {
		return nil, fmt.Errorf("wifisim: %w", err)
	}
	res := &wifiSimResult{Authorized: make([]bool, c.Stations), Pings: make([]int, c.Stations), Replies: make([]int, c.Stations)}
	var pingers []*simPinger
	for i := 0; i < c.Stations; i++ {
		p := &simPinger{idx: i, mac: simStationMAC(i), ip: simStationIP(i)}
		s, err := sta.New(sta.Config{Addr: p.mac, SSID: c.SSID, Passphrase: c.Passphrase, Open: open, HardwareCrypto: c.Hardware,
			Receive: p.receive})
		if err != nil {
			return nil, fmt.Errorf("wifisim: station %d: %w", i+1, err)
		}
		p.sta = s
		sr, err := m.NewRadio(medium.RadioConfig{Addr: p.mac, Channel: ch})
		if err != nil {
			return nil, err
		}
		m.AddTicker(s)
		m.AddTicker(p)
		if err := s.Start(sr, m.Now()); err != nil {
			return nil, fmt.Errorf("wifisim: station %d: %w", i+1, err)
		}
		pingers = append(pingers, p)
	}
	m.Run(c.Duration)
	if err := m.CaptureErr(); err != nil {
		return nil, fmt.Errorf("wifisim: pcap: %w", err)
	}
	for i, p := range pingers {
		p.mu.Lock()
		res.Authorized[i] = p.sta.State() == sta.Authorized
		res.Pings[i], res.Replies[i] = p.pings, p.replies
		p.mu.Unlock()
	}
	return res, nil
}

// simGatewayHost answers ARP for 192.168.1.1 and ICMP echo to it, on the
// AP's distribution system.
type simGatewayHost struct {
	ap  *ap.AP
	out []byte
}

func (g *simGatewayHost) receive(eth []byte) {
	if len(eth) < 14 {
		return
	}
	src := wlan.MAC(eth[6:12])
	switch binary.BigEndian.Uint16(eth[12:14]) {
	case etherARP:
		if len(eth) < 42 || binary.BigEndian.Uint16(eth[20:22]) != 1 || [4]byte(eth[38:42]) != simGWIP {
			return
		}
		g.out = arpFrame(g.out[:0], 2, simGateway, simGWIP, src, [4]byte(eth[28:32]))
	case etherIPv4:
		ip := eth[14:]
		if len(ip) < 28 || ip[0] != 0x45 || ip[9] != protoICMP || [4]byte(ip[16:20]) != simGWIP || ip[20] != icmpEchoRequest {
			return
		}
		n := int(binary.BigEndian.Uint16(ip[2:4]))
		if n < 28 || n > len(ip) {
			return
		}
		g.out = icmpFrame(g.out[:0], icmpEchoReply, simGateway, src, simGWIP, [4]byte(ip[12:16]),
			binary.BigEndian.Uint16(ip[24:26]), binary.BigEndian.Uint16(ip[26:28]), ip[28:n])
	default:
		return
	}
	_ = g.ap.SendFromDS(g.out)
}

// simPinger is a station's traffic: ARP for the gateway, then a ping
// every pingInterval (a medium.Ticker).
type simPinger struct {
	idx  int
	mac  wlan.MAC
	ip   [4]byte
	sta  *sta.Station
	next time.Time
	seq  uint16
	buf  []byte

	mu       sync.Mutex
	gwMAC    wlan.MAC
	resolved bool
	pings    int
	replies  int
}

func (p *simPinger) Tick(now time.Time) {
	if now.Before(p.next) || p.sta.State() != sta.Authorized {
		return
	}
	p.next = now.Add(pingInterval)
	p.mu.Lock()
	resolved, gw := p.resolved, p.gwMAC
	p.mu.Unlock()
	if !resolved {
		p.buf = arpFrame(p.buf[:0], 1, p.mac, p.ip, wlan.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, simGWIP)
		_ = p.sta.Send(p.buf)
		return
	}
	p.seq++
	payload := []byte(fmt.Sprintf("gowrt wifisim station %d ping %d", p.idx+1, p.seq))
	p.buf = icmpFrame(p.buf[:0], icmpEchoRequest, p.mac, gw, p.ip, simGWIP, uint16(p.idx+1), p.seq, payload)
	if p.sta.Send(p.buf) == nil {
		p.mu.Lock()
		p.pings++
		p.mu.Unlock()
	}
}

func (p *simPinger) receive(eth []byte) {
	if len(eth) < 14 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch binary.BigEndian.Uint16(eth[12:14]) {
	case etherARP:
		if len(eth) >= 42 && binary.BigEndian.Uint16(eth[20:22]) == 2 && [4]byte(eth[28:32]) == simGWIP {
			p.gwMAC, p.resolved = wlan.MAC(eth[22:28]), true
		}
	case etherIPv4:
		ip := eth[14:]
		if len(ip) >= 28 && ip[9] == protoICMP && ip[20] == icmpEchoReply && [4]byte(ip[16:20]) == p.ip {
			p.replies++
		}
	}
}

// Frame formats: ARP (RFC 826) for IPv4 over Ethernet, IPv4 (RFC 791)
// carrying ICMP echo (RFC 792).
const (
	etherARP        = 0x0806
	etherIPv4       = 0x0800
	protoICMP       = 1
	icmpEchoRequest = 8
	icmpEchoReply   = 0
)

func arpFrame(b []byte, op uint16, sha wlan.MAC, spa [4]byte, tha wlan.MAC, tpa [4]byte) []byte {
	dst := tha
	if op == 1 {
		tha = wlan.MAC{}
	}
	b = append(b, dst[:]...)
	b = append(b, sha[:]...)
	b = binary.BigEndian.AppendUint16(b, etherARP)
	b = append(b, 0, 1, 8, 0, 6, 4) // Ethernet, IPv4, address lengths
	b = binary.BigEndian.AppendUint16(b, op)
	b = append(b, sha[:]...)
	b = append(b, spa[:]...)
	b = append(b, tha[:]...)
	return append(b, tpa[:]...)
}

func icmpFrame(b []byte, typ byte, src, dst wlan.MAC, sip, dip [4]byte, id, seq uint16, payload []byte) []byte {
	b = append(b, dst[:]...)
	b = append(b, src[:]...)
	b = binary.BigEndian.AppendUint16(b, etherIPv4)
	ip := len(b)
	total := 20 + 8 + len(payload)
	b = append(b, 0x45, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(total))
	b = append(b, 0, 0, 0x40, 0, 64, protoICMP, 0, 0) // id 0, DF, TTL 64, checksum later
	b = append(b, sip[:]...)
	b = append(b, dip[:]...)
	binary.BigEndian.PutUint16(b[ip+10:], inetChecksum(b[ip:ip+20]))
	icmp := len(b)
	b = append(b, typ, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, id)
	b = binary.BigEndian.AppendUint16(b, seq)
	b = append(b, payload...)
	binary.BigEndian.PutUint16(b[icmp+2:], inetChecksum(b[icmp:]))
	return b
}

// inetChecksum is the Internet checksum (RFC 1071).
func inetChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// wifisim is the command.
func wifisim(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("wifisim")
	ssid := fs.String("ssid", "gowrt", "")
	pass := fs.String("passphrase", "", "")
	stations := fs.Int("stations", 1, "")
	pcapPath := fs.String("pcap", "", "")
	dur := fs.Duration("duration", 5*time.Second, "")
	hw := fs.Bool("hw-crypto", false, "")
	seed := fs.Uint64("seed", 1, "")
	if err := fs.Parse(args); err != nil {
		return 2, usagef("wifisim: %v", err)
	}
	if fs.NArg() != 0 {
		return 2, usagef("wifisim: unexpected argument %q", fs.Arg(0))
	}
	if *pcapPath == "" {
		return 2, usagef("wifisim: -pcap FILE is required")
	}
	f, err := os.Create(*pcapPath)
	if err != nil {
		return 1, err
	}
	w := bufio.NewWriter(f)
	res, err := runWifiSim(wifiSimConfig{SSID: *ssid, Passphrase: *pass, Stations: *stations, Duration: *dur, Hardware: *hw, Seed: *seed, Pcap: w})
	if err == nil {
		err = w.Flush()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return 1, err
	}
	code := 0
	for i := range res.Authorized {
		fmt.Fprintf(stdout, "station %d %v: authorized %v, %d pings, %d replies\n", i+1, simStationMAC(i), res.Authorized[i], res.Pings[i], res.Replies[i])
		if !res.Authorized[i] || res.Replies[i] == 0 {
			code = 1
		}
	}
	fmt.Fprintf(stdout, "capture: %s (decrypt with wpa-pwd %q)\n", *pcapPath, *pass+":"+*ssid)
	return code, nil
}
