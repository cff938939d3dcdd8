package confstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
)

// On-flash layout of one copy (all integers little-endian, whatever the
// CPU, so a flash image is the same for malta-be and malta-le):
//
//	off  size  field
//	0    4     magic "GWCF": the commit mark, programmed last
//	4    2     format version (1)
//	6    2     header length (20)
//	8    4     sequence number (serial arithmetic: newer if int32(a-b) > 0)
//	12   4     payload length in bytes
//	16   4     CRC-32 (IEEE) of bytes 4..15 and the payload
//	20   ...   payload: records
//
// A record is: key length (1 byte, 1..MaxKey), value length (2 bytes,
// 0..MaxValue), key, value. Keys are printable ASCII without '=' and
// appear in strictly ascending order, so every configuration has exactly
// one encoding and a decoder can reject duplicates.
const (
	HeaderSize = 20
	Version    = 1
	MaxKey     = 64
	MaxValue   = 1024
)

var magic = [4]byte{'G', 'W', 'C', 'F'}

// Errors from decoding a copy. They wrap ErrFormat.
var (
	ErrFormat   = errors.New("confstore: bad configuration record")
	ErrBlank    = errors.New("confstore: copy is blank (erased)")
	ErrUnsealed = fmt.Errorf("%w: no commit mark (interrupted save)", ErrFormat)
	ErrMagic    = fmt.Errorf("%w: bad magic", ErrFormat)
	ErrVersion  = fmt.Errorf("%w: unsupported version", ErrFormat)
	ErrLength   = fmt.Errorf("%w: bad length", ErrFormat)
	ErrCRC      = fmt.Errorf("%w: CRC mismatch", ErrFormat)
	ErrRecord   = fmt.Errorf("%w: bad record", ErrFormat)
	ErrKey      = errors.New("confstore: invalid key")
	ErrValue    = errors.New("confstore: value too long")
	ErrTooLarge = errors.New("confstore: configuration does not fit the slot")
)

// Values is a configuration: key → value.
type Values map[string]string

// Clone returns a copy of v.
func (v Values) Clone() Values {
	c := make(Values, len(v))
	for k, x := range v {
		c[k] = x
	}
	return c
}

// CheckKey reports whether k may be used as a key.
func CheckKey(k string) error {
	if len(k) == 0 || len(k) > MaxKey {
		return fmt.Errorf("%w %q: length %d not in 1..%d", ErrKey, k, len(k), MaxKey)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c > '~' || c == '=' {
			return fmt.Errorf("%w %q: byte %#x at %d", ErrKey, k, c, i)
		}
	}
	return nil
}

// EncodedSize is the size of v's copy (header + payload), before padding.
func EncodedSize(v Values) int {
	n := HeaderSize
	for k, x := range v {
		n += 3 + len(k) + len(x)
	}
	return n
}

// Encode returns the copy for v with sequence number seq, padded with 0xFF
// to a multiple of 4 bytes (the program unit; 0xFF words cost nothing to
// program).
func Encode(v Values, seq uint32) ([]byte, error) {
	keys := make([]string, 0, len(v))
	for k, x := range v {
		if err := CheckKey(k); err != nil {
			return nil, err
		}
		if len(x) > MaxValue {
			return nil, fmt.Errorf("%w: %q has %d bytes (max %d)", ErrValue, k, len(x), MaxValue)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n := EncodedSize(v)
	b := make([]byte, HeaderSize, (n+3)&^3)
	for _, k := range keys {
		x := v[k]
		b = append(b, byte(len(k)), byte(len(x)), byte(len(x)>>8))
		b = append(b, k...)
		b = append(b, x...)
	}
	copy(b[0:], magic[:])
	le := binary.LittleEndian
	le.PutUint16(b[4:], Version)
	le.PutUint16(b[6:], HeaderSize)
	le.PutUint32(b[8:], seq)
	le.PutUint32(b[12:], uint32(n-HeaderSize))
	le.PutUint32(b[16:], sum(b[4:16], b[HeaderSize:]))
	for len(b)%4 != 0 {
		b = append(b, 0xff)
	}
	return b, nil
}

func sum(hdr, payload []byte) uint32 {
	return crc32.Update(crc32.ChecksumIEEE(hdr), crc32.IEEETable, payload)
}

// Decode parses the copy at the start of b (a whole slot, or at least the
// copy). It returns ErrBlank for erased flash, ErrUnsealed for a copy whose
// commit mark was never written, and other ErrFormat errors for damage.
func Decode(b []byte) (seq uint32, v Values, err error) {
	if len(b) < HeaderSize {
		return 0, nil, fmt.Errorf("%w: %d bytes, header needs %d", ErrLength, len(b), HeaderSize)
	}
	if !bytes.Equal(b[:4], magic[:]) {
		if bytes.Equal(b[:4], []byte{0xff, 0xff, 0xff, 0xff}) {
			if blank(b) {
				return 0, nil, ErrBlank
			}
			return 0, nil, ErrUnsealed
		}
		return 0, nil, fmt.Errorf("%w % x", ErrMagic, b[:4])
	}
	le := binary.LittleEndian
	if ver, hl := le.Uint16(b[4:]), le.Uint16(b[6:]); ver != Version || hl != HeaderSize {
		return 0, nil, fmt.Errorf("%w %d (header %d bytes)", ErrVersion, ver, hl)
	}
	seq = le.Uint32(b[8:])
	n := le.Uint32(b[12:])
	if uint64(n) > uint64(len(b)-HeaderSize) {
		return 0, nil, fmt.Errorf("%w: payload %d bytes, slot holds %d", ErrLength, n, len(b)-HeaderSize)
	}
	payload := b[HeaderSize : HeaderSize+int(n)]
	if got, want := sum(b[4:16], payload), le.Uint32(b[16:]); got != want {
		return 0, nil, fmt.Errorf("%w: computed %#08x, stored %#08x", ErrCRC, got, want)
	}
	v, err = ParseRecords(payload)
	if err != nil {
		return 0, nil, err
	}
	return seq, v, nil
}

// ParseRecords parses a payload. It trusts nothing: lengths are checked
// against what is left, keys against CheckKey and the ordering rule.
func ParseRecords(p []byte) (Values, error) {
	v := Values{}
	prev := ""
	for off := 0; off < len(p); {
		if len(p)-off < 3 {
			return nil, fmt.Errorf("%w at %d: truncated record header", ErrRecord, off)
		}
		kl := int(p[off])
		vl := int(p[off+1]) | int(p[off+2])<<8
		if vl > MaxValue {
			return nil, fmt.Errorf("%w at %d: value length %d", ErrRecord, off, vl)
		}
		off += 3
		if len(p)-off < kl+vl {
			return nil, fmt.Errorf("%w at %d: record of %d+%d bytes overruns payload", ErrRecord, off-3, kl, vl)
		}
		k := string(p[off : off+kl])
		if err := CheckKey(k); err != nil {
			return nil, fmt.Errorf("%w at %d: %v", ErrRecord, off-3, err)
		}
		if len(v) > 0 && k <= prev {
			return nil, fmt.Errorf("%w at %d: key %q not after %q", ErrRecord, off-3, k, prev)
		}
		v[k] = string(p[off+kl : off+kl+vl])
		prev = k
		off += kl + vl
	}
	return v, nil
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != 0xff {
			return false
		}
	}
	return true
}
