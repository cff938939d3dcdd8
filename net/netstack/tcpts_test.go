package netstack

import (
	"encoding/binary"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/checksum"
	"gvisor.dev/gvisor/pkg/tcpip/header"
)

var (
	tsSrc = tcpip.AddrFrom4([4]byte{192, 168, 1, 100})
	tsDst = tcpip.AddrFrom4([4]byte{192, 168, 1, 1})
)

// Option layouts of connection requests. linuxSYN is what Linux 6.1
// sends (tcp_output.c tcp_options_write: MSS, SACK permitted, timestamps,
// NOP, window scale); oddTS puts the option at an odd offset, so the
// checksum words it touches straddle its ends.
var (
	linuxSYN = []byte{2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0, 1, 3, 3, 7}
	oddTS    = []byte{1, 8, 10, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1, 1, 2, 4, 0x05, 0xb4}
	noTS     = []byte{2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7}
)

// tcpFrame builds an Ethernet frame with an IPv4 TCP segment from tsSrc
// to tsDst carrying options opts (a multiple of 4 bytes) and payload,
// with a correct TCP checksum.
func tcpFrame(flags header.TCPFlags, opts, payload []byte) []byte {
	tcpLen := header.TCPMinimumSize + len(opts) + len(payload)
	f := make([]byte, gnet.EthHeaderLen+header.IPv4MinimumSize+tcpLen)
	binary.BigEndian.PutUint16(f[12:14], etherTypeIPv4)
	ip := header.IPv4(f[gnet.EthHeaderLen:])
	ip.Encode(&header.IPv4Fields{TotalLength: uint16(len(ip)), TTL: 64, Protocol: uint8(header.TCPProtocolNumber),
		SrcAddr: tsSrc, DstAddr: tsDst})
	ip.SetChecksum(^ip.CalculateChecksum())
	t := header.TCP(ip[header.IPv4MinimumSize:])
	t.Encode(&header.TCPFields{SrcPort: 40000, DstPort: 9, SeqNum: 1000, DataOffset: uint8(header.TCPMinimumSize + len(opts)),
		Flags: flags, WindowSize: 64240})
	copy(t[header.TCPMinimumSize:], opts)
	copy(t.Payload(), payload)
	t.SetChecksum(^tcpChecksum(t))
	return f
}

// tcpChecksum is the TCP checksum over the pseudo-header and t, computed
// from scratch with gVisor's own code.
func tcpChecksum(t header.TCP) uint16 {
	x := header.PseudoHeaderChecksum(header.TCPProtocolNumber, tsSrc, tsDst, uint16(len(t)))
	return checksum.Checksum(t, x)
}

func TestStripTimestamp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []byte
		payload []byte
	}{
		{"linux", linuxSYN, nil},
		{"odd offset", oddTS, nil},
		{"odd payload", linuxSYN, []byte("abc")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tcpFrame(header.TCPFlagSyn, tc.opts, tc.payload)
			before := header.ParseSynOptions(header.TCP(f[34:]).Options(), false)
			if !before.TS {
				t.Fatal("test frame has no timestamps")
			}
			opt, tcp, ok := synTimestamp(f)
			if !ok || tcp != 34 {
				t.Fatalf("synTimestamp = %d, %d, %v", opt, tcp, ok)
			}
			stripTimestamp(f, opt, tcp)
			seg := header.TCP(f[tcp:])
			if got := tcpChecksum(seg); got != 0xffff {
				t.Fatalf("checksum does not verify after the change: sum %#04x", got)
			}
			after := header.ParseSynOptions(seg.Options(), false)
			if after.TS {
				t.Fatal("timestamps still offered")
			}
			if after.MSS != before.MSS || after.WS != before.WS || after.SACKPermitted != before.SACKPermitted {
				t.Fatalf("other options changed: %+v, were %+v", after, before)
			}
			if string(seg.Payload()) != string(tc.payload) {
				t.Fatal("payload changed")
			}
		})
	}
}

// TestStripKeepsBadChecksum: a corrupt segment stays corrupt, so the
// stack still drops it.
func TestStripKeepsBadChecksum(t *testing.T) {
	f := tcpFrame(header.TCPFlagSyn, linuxSYN, nil)
	f[34+16] ^= 0x40
	opt, tcp, ok := synTimestamp(f)
	if !ok {
		t.Fatal("not found")
	}
	stripTimestamp(f, opt, tcp)
	if tcpChecksum(header.TCP(f[tcp:])) == 0xffff {
		t.Fatal("a corrupt segment verifies after the change")
	}
}

func TestSynTimestampLeavesOthers(t *testing.T) {
	frag := tcpFrame(header.TCPFlagSyn, linuxSYN, nil)
	binary.BigEndian.PutUint16(frag[20:22], 0x2000) // more fragments
	badLen := tcpFrame(header.TCPFlagSyn, linuxSYN, nil)
	badLen[34+header.TCPMinimumSize+7] = 12 // TS length runs past the options
	shortTotal := tcpFrame(header.TCPFlagSyn, linuxSYN, nil)
	binary.BigEndian.PutUint16(shortTotal[16:18], 40) // IP says no options
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"SYN-ACK", tcpFrame(header.TCPFlagSyn|header.TCPFlagAck, linuxSYN, nil)},
		{"ACK", tcpFrame(header.TCPFlagAck, nil, []byte("data"))},
		{"no timestamps", tcpFrame(header.TCPFlagSyn, noTS, nil)},
		{"fragment", frag},
		{"bad option length", badLen},
		{"IP length", shortTotal},
		{"truncated", tcpFrame(header.TCPFlagSyn, linuxSYN, nil)[:60]},
		{"ARP", make([]byte, 60)},
	} {
		if _, _, ok := synTimestamp(tc.frame); ok {
			t.Errorf("%s: timestamps found", tc.name)
		}
	}
}

func FuzzSynTimestamp(f *testing.F) {
	f.Add(tcpFrame(header.TCPFlagSyn, linuxSYN, nil))
	f.Add(tcpFrame(header.TCPFlagSyn, oddTS, []byte("x")))
	f.Add(tcpFrame(header.TCPFlagSyn, noTS, nil))
	f.Add(tcpFrame(header.TCPFlagSyn|header.TCPFlagAck, linuxSYN, nil))
	f.Fuzz(func(t *testing.T, frame []byte) {
		opt, tcp, ok := synTimestamp(frame)
		if !ok {
			return
		}
		total := gnet.EthHeaderLen + int(binary.BigEndian.Uint16(frame[16:18]))
		seg := header.TCP(frame[tcp:total])
		valid := tcpChecksum(seg) == 0xffff
		stripTimestamp(frame, opt, tcp)
		if now := tcpChecksum(seg) == 0xffff; now != valid {
			t.Fatalf("checksum valid %v before the change, %v after", valid, now)
		}
		if header.ParseSynOptions(seg.Options(), false).TS {
			t.Fatal("timestamps still offered")
		}
	})
}
