// Package pcap writes capture files in the classic libpcap format, so that
// tools such as tshark can read what a simulation put on the wire or air.
//
// Format facts from the libpcap file format description (pcap-savefile(5)
// and the IETF draft "PCAP Capture File Format"): a 24-byte file header
// (magic 0xa1b2c3d4, version 2.4, snap length, link type) and a 16-byte
// record header per packet (seconds, microseconds, captured length,
// original length). Files are written little-endian; readers detect the byte
// order from the magic number.
package pcap

import (
	"encoding/binary"
	"errors"
	"io"
	"time"
)

// Link types (the LINKTYPE_ registry of tcpdump.org).
const (
	LinkTypeEthernet       = 1   // LINKTYPE_ETHERNET
	LinkTypeIEEE80211      = 105 // LINKTYPE_IEEE802_11: 802.11 frames, no FCS
	LinkTypeIEEE80211Radio = 127 // LINKTYPE_IEEE802_11_RADIOTAP: radiotap header, then the frame
	defaultSnapLen         = 65535
	magicMicroseconds      = 0xa1b2c3d4
	versionMajor           = 2
	versionMinor           = 4
	fileHeaderLen          = 24
	recordHeaderLen        = 16
)

// ErrTooLong is returned for a packet longer than the file's snap length.
var ErrTooLong = errors.New("pcap: packet longer than the snap length")

// Writer appends packets of one link type to a capture file.
// It is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	snapLen int
	rec     [recordHeaderLen]byte // reused so a packet costs no allocation
}

// NewWriter writes the file header for linkType to w and returns a Writer
// for its packets. A snapLen of 0 means 65535.
func NewWriter(w io.Writer, linkType uint32, snapLen int) (*Writer, error) {
	if snapLen <= 0 {
		snapLen = defaultSnapLen
	}
	var h [fileHeaderLen]byte
	binary.LittleEndian.PutUint32(h[0:], magicMicroseconds)
	binary.LittleEndian.PutUint16(h[4:], versionMajor)
	binary.LittleEndian.PutUint16(h[6:], versionMinor)
	// h[8:16]: time zone offset and timestamp accuracy, both 0.
	binary.LittleEndian.PutUint32(h[16:], uint32(snapLen))
	binary.LittleEndian.PutUint32(h[20:], linkType)
	if _, err := w.Write(h[:]); err != nil {
		return nil, err
	}
	return &Writer{w: w, snapLen: snapLen}, nil
}

// WritePacket appends one packet captured at ts.
func (pw *Writer) WritePacket(ts time.Time, data []byte) error {
	if len(data) > pw.snapLen {
		return ErrTooLong
	}
	usec := ts.UnixMicro()
	binary.LittleEndian.PutUint32(pw.rec[0:], uint32(usec/1e6))
	binary.LittleEndian.PutUint32(pw.rec[4:], uint32(usec%1e6))
	binary.LittleEndian.PutUint32(pw.rec[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(pw.rec[12:], uint32(len(data)))
	if _, err := pw.w.Write(pw.rec[:]); err != nil {
		return err
	}
	_, err := pw.w.Write(data)
	return err
}
