//go:build mips || mipsle

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/gowrt/gowrt/usbnet/uhci"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// usb-net's CDC-ECM configuration (QEMU hw/usb/dev-network.c): value 1;
// interface 1 alternate 1 has the bulk endpoints, 64-byte packets.
const (
	ecmConfig   = 1
	dataIface   = 1
	dataAlt     = 1
	bulkIn      = 0x82
	bulkOut     = 0x02
	bulkPacket  = 64
	rxInFlight  = 4
	pingPayload = 1472 // a 1500-byte IP packet, a 1514-byte frame
	pings       = 200
	window      = 8
)

var (
	ourMAC = [6]byte{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}
	ourIP  = [4]byte{10, 0, 2, 15}
	gwIP   = [4]byte{10, 0, 2, 2} // slirp's virtual gateway answers ICMP echo
)

// pingGateway selects usb-net's ECM configuration and data interface,
// then moves Ethernet frames over the bulk pipes directly (no CDC-ECM
// driver: that is the usbnet framework's job): ARP for slirp's gateway,
// pings one at a time (round-trip time), then a window of pings (bulk
// throughput both ways through the 12 Mb/s bus).
func pingGateway(hc *uhci.HC, ep0 *ctl, sp usb.Speed) error {
	if _, err := ep0.do(usb.Setup{Request: 9, Value: ecmConfig}); err != nil {
		return fmt.Errorf("SET_CONFIGURATION: %w", err)
	}
	if _, err := ep0.do(usb.Setup{RequestType: usb.RecipientIface, Request: 11, Value: dataAlt, Index: dataIface}); err != nil {
		return fmt.Errorf("SET_INTERFACE: %w", err)
	}
	in, err := hc.OpenPipe(usb.PipeConfig{Address: 1, Endpoint: bulkIn, Type: usb.Bulk, MaxPacket: bulkPacket, Speed: sp})
	if err != nil {
		return err
	}
	out, err := hc.OpenPipe(usb.PipeConfig{Address: 1, Endpoint: bulkOut, Type: usb.Bulk, MaxPacket: bulkPacket, Speed: sp})
	if err != nil {
		return err
	}
	defer in.Close()
	defer out.Close()
	rx := make(chan []byte, 64)
	for i := 0; i < rxInFlight; i++ {
		x, err := in.NewTransfer(2048)
		if err != nil {
			return err
		}
		x.Flags = usb.ShortOK
		x.Done = func(x *usb.Transfer) {
			if x.Err != nil {
				return // cancelled at Close, or the device went
			}
			select {
			case rx <- append([]byte(nil), x.Buf[:x.Actual]...):
			default:
			}
			x.Len = len(x.Buf)
			_ = in.Submit(x)
		}
		if err := in.Submit(x); err != nil {
			return err
		}
	}
	txFree := make(chan *usb.Transfer, window)
	for i := 0; i < window; i++ {
		x, err := out.NewTransfer(2048)
		if err != nil {
			return err
		}
		// A frame that fills its last packet ends with a zero-length one.
		x.Flags = usb.ZeroLengthPacket
		x.Done = func(x *usb.Transfer) { txFree <- x }
		txFree <- x
	}
	send := func(f []byte) error {
		select {
		case x := <-txFree:
			x.Len = copy(x.Buf, f)
			return out.Submit(x)
		case <-time.After(time.Second):
			return errors.New("bulk OUT: no transfer came back")
		}
	}
	// ARP for the gateway.
	var gwMAC [6]byte
	if err := send(arpRequest()); err != nil {
		return err
	}
	deadline := time.After(2 * time.Second)
	for found := false; !found; {
		select {
		case f := <-rx:
			if len(f) >= 42 && binary.BigEndian.Uint16(f[12:]) == 0x0806 && binary.BigEndian.Uint16(f[20:]) == 2 {
				copy(gwMAC[:], f[22:28])
				found = true
			}
		case <-deadline:
			return errors.New("no ARP reply from the gateway")
		}
	}
	fmt.Printf("usbnet: gateway 10.0.2.2 is %x over bulk endpoints\n", gwMAC)
	// One at a time: the round trip.
	var rtt time.Duration
	for i := 0; i < 20; i++ {
		t0 := time.Now()
		if err := send(echoRequest(gwMAC, uint16(i), pingPayload)); err != nil {
			return err
		}
		if err := awaitReply(rx, uint16(i)); err != nil {
			return err
		}
		rtt += time.Since(t0)
	}
	fmt.Printf("usbnet: ping 10.0.2.2 with %d-byte frames: average round trip %.1f ms\n", 14+20+8+pingPayload, float64(rtt.Microseconds())/20/1000)
	// A window of requests outstanding.
	t0 := time.Now()
	sent, got := 0, 0
	for got < pings {
		for sent < pings && sent-got < window {
			if err := send(echoRequest(gwMAC, uint16(1000+sent), pingPayload)); err != nil {
				return err
			}
			sent++
		}
		select {
		case f := <-rx:
			if isReply(f) {
				got++
			}
		case <-time.After(2 * time.Second):
			return fmt.Errorf("%d of %d replies", got, pings)
		}
	}
	el := time.Since(t0)
	bits := float64(pings*(14+20+8+pingPayload)) * 8
	fmt.Printf("usbnet: %d pings of %d-byte frames, %d outstanding, in %d ms: %.2f Mbit/s each way (%.2f both)\n",
		pings, 14+20+8+pingPayload, window, el.Milliseconds(), bits/el.Seconds()/1e6, 2*bits/el.Seconds()/1e6)
	return nil
}

func awaitReply(rx chan []byte, seq uint16) error {
	deadline := time.After(2 * time.Second)
	for {
		select {
		case f := <-rx:
			if isReply(f) && binary.BigEndian.Uint16(f[40:]) == seq {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no echo reply %d", seq)
		}
	}
}

// isReply reports an IPv4 ICMP echo reply to us.
func isReply(f []byte) bool {
	return len(f) >= 42 && binary.BigEndian.Uint16(f[12:]) == 0x0800 && f[23] == 1 && f[34] == 0 &&
		[4]byte(f[30:34]) == ourIP
}

func arpRequest() []byte {
	f := make([]byte, 60)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(f[6:], ourMAC[:])
	binary.BigEndian.PutUint16(f[12:], 0x0806)
	// RFC 826: Ethernet, IPv4, request.
	copy(f[14:], []byte{0, 1, 8, 0, 6, 4, 0, 1})
	copy(f[22:], ourMAC[:])
	copy(f[28:], ourIP[:])
	copy(f[38:], gwIP[:])
	return f
}

// echoRequest is an ICMP echo request (RFC 792) in IPv4 (RFC 791).
func echoRequest(dst [6]byte, seq uint16, payload int) []byte {
	f := make([]byte, 14+20+8+payload)
	copy(f, dst[:])
	copy(f[6:], ourMAC[:])
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:34]
	ip[0], ip[8], ip[9] = 0x45, 64, 1
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+payload))
	copy(ip[12:], ourIP[:])
	copy(ip[16:], gwIP[:])
	binary.BigEndian.PutUint16(ip[10:], checksum(ip))
	icmp := f[34:]
	icmp[0] = 8
	binary.BigEndian.PutUint16(icmp[4:], 0x6777)
	binary.BigEndian.PutUint16(icmp[6:], seq)
	for i := 8; i < len(icmp); i++ {
		icmp[i] = byte(i)
	}
	binary.BigEndian.PutUint16(icmp[2:], checksum(icmp))
	return f
}

// checksum is the Internet checksum (RFC 1071).
func checksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
