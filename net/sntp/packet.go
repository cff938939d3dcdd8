// Package sntp is an SNTPv4 client (RFC 4330; packet format and on-wire
// calculations of RFC 5905) that sets the router's clock: it asks a few
// servers, keeps the best answer (lowest round-trip delay), steps the
// clock once when it is far off or was never set, slews it otherwise, and
// polls again every 64 s rising to 1024 s.
package sntp

import (
	"encoding/binary"
	"errors"
	"time"
)

// PacketLen is the length of the NTP header (RFC 5905 §7.3, Figure 8).
// Extension fields and a MAC may follow; the client ignores them.
const PacketLen = 48

// Modes (RFC 5905 §7.3, "Mode").
const (
	ModeClient = 3
	ModeServer = 4
)

// Leap indicator 3: the server's clock is unsynchronised (RFC 5905 §7.3).
const LeapNotSync = 3

// Version is the NTP version the client sends (RFC 4330 §5: "4").
const Version = 4

// ntpUnixOffset is 1970-01-01 minus 1900-01-01 in seconds (RFC 868;
// RFC 5905 Figure 4: 2,208,988,800).
const ntpUnixOffset = 2_208_988_800

// Timestamp is an NTP timestamp: 32 bits of seconds since the start of an
// era and 32 bits of fraction (RFC 5905 §6, "NTP Timestamp Format").
type Timestamp uint64

// TimestampOf returns t as an NTP timestamp (its era is dropped; Time
// recovers it for 1968..2104).
func TimestampOf(t time.Time) Timestamp {
	sec := uint32(t.Unix() + ntpUnixOffset) // modulo 2^32: the era is implied
	// Round the fraction up so Time returns the same nanosecond.
	frac := (uint64(t.Nanosecond())<<32 + 999_999_999) / 1_000_000_000
	return Timestamp(uint64(sec)<<32 | frac)
}

// Time returns the time ts stands for, by the rule of RFC 4330 §3: with
// the most significant bit set the time is in 1968..2036 and counted from
// 1900-01-01 (era 0); with it clear, in 2036..2104 and counted from
// 2036-02-07 06:28:16 UTC (era 1). The rule needs no local clock, which a
// router without an RTC does not have at boot.
func (ts Timestamp) Time() time.Time {
	sec := int64(ts >> 32)
	if sec&0x8000_0000 == 0 {
		sec += 1 << 32 // era 1
	}
	nsec := (uint64(uint32(ts)) * 1_000_000_000) >> 32
	return time.Unix(sec-ntpUnixOffset, int64(nsec)).UTC()
}

// shortDuration converts the NTP short format (16.16 seconds, RFC 5905
// §6) to a duration.
func shortDuration(v uint32) time.Duration {
	return time.Duration((uint64(v) * uint64(time.Second)) >> 16)
}

// Packet is the NTP header (RFC 5905 §7.3).
type Packet struct {
	Leap           uint8 // LI, 2 bits
	Version        uint8 // VN, 3 bits
	Mode           uint8 // 3 bits
	Stratum        uint8
	Poll           int8 // log2 seconds
	Precision      int8 // log2 seconds
	RootDelay      uint32
	RootDispersion uint32
	RefID          [4]byte
	Reference      Timestamp
	Originate      Timestamp
	Receive        Timestamp
	Transmit       Timestamp
}

// ErrShort: a datagram shorter than the NTP header.
var ErrShort = errors.New("sntp: packet shorter than 48 bytes")

// Encode writes the header into b[:PacketLen]; b must be at least that long.
func (p *Packet) Encode(b []byte) {
	_ = b[PacketLen-1]
	b[0] = p.Leap<<6 | (p.Version&7)<<3 | p.Mode&7
	b[1] = p.Stratum
	b[2] = byte(p.Poll)
	b[3] = byte(p.Precision)
	binary.BigEndian.PutUint32(b[4:], p.RootDelay)
	binary.BigEndian.PutUint32(b[8:], p.RootDispersion)
	copy(b[12:16], p.RefID[:])
	binary.BigEndian.PutUint64(b[16:], uint64(p.Reference))
	binary.BigEndian.PutUint64(b[24:], uint64(p.Originate))
	binary.BigEndian.PutUint64(b[32:], uint64(p.Receive))
	binary.BigEndian.PutUint64(b[40:], uint64(p.Transmit))
}

// Decode parses the header at the start of b. It checks only the length;
// Validate judges whether a server's answer is usable.
func Decode(b []byte) (Packet, error) {
	if len(b) < PacketLen {
		return Packet{}, ErrShort
	}
	var p Packet
	p.Leap = b[0] >> 6
	p.Version = b[0] >> 3 & 7
	p.Mode = b[0] & 7
	p.Stratum = b[1]
	p.Poll = int8(b[2])
	p.Precision = int8(b[3])
	p.RootDelay = binary.BigEndian.Uint32(b[4:])
	p.RootDispersion = binary.BigEndian.Uint32(b[8:])
	copy(p.RefID[:], b[12:16])
	p.Reference = Timestamp(binary.BigEndian.Uint64(b[16:]))
	p.Originate = Timestamp(binary.BigEndian.Uint64(b[24:]))
	p.Receive = Timestamp(binary.BigEndian.Uint64(b[32:]))
	p.Transmit = Timestamp(binary.BigEndian.Uint64(b[40:]))
	return p, nil
}
