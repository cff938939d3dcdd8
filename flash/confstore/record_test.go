package confstore

import (
	"bytes"
	"errors"
	"maps"
	"testing"
)

func TestEncodeDecode(t *testing.T) {
	for _, v := range []Values{{}, {"a": ""}, {"lan.ipaddr": "192.168.1.1", "z": "last", "A": "first"}} {
		b, err := Encode(v, 42)
		if err != nil {
			t.Fatal(err)
		}
		if len(b)%4 != 0 {
			t.Fatalf("copy of %d bytes is not word-sized", len(b))
		}
		seq, got, err := Decode(append(b, 0xff, 0xff, 0xff, 0xff))
		if err != nil || seq != 42 || !maps.Equal(got, v) {
			t.Fatalf("%v: decoded %v seq %d err %v", v, got, seq, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	good, _ := Encode(Values{"key": "value"}, 1)
	blankSlot := bytes.Repeat([]byte{0xff}, 64)
	unsealed := append([]byte(nil), good...)
	copy(unsealed, []byte{0xff, 0xff, 0xff, 0xff})
	mut := func(i int, b byte) []byte { c := append([]byte(nil), good...); c[i] = b; return c }
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"short", good[:10], ErrLength},
		{"blank", blankSlot, ErrBlank},
		{"unsealed", unsealed, ErrUnsealed},
		{"magic", mut(0, 'g'), ErrMagic},
		{"version", mut(4, 2), ErrVersion},
		{"length", mut(15, 0x7f), ErrLength},
		{"crc", mut(HeaderSize+3, 'K'), ErrCRC},
	} {
		if _, _, err := Decode(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestParseRecordsErrors(t *testing.T) {
	for _, p := range [][]byte{
		{1},                          // truncated header
		{1, 0, 0},                    // key missing
		{3, 5, 0, 'a', 'b', 'c'},     // value missing
		{0, 0, 0},                    // empty key
		{1, 0xff, 0xff, 'a'},         // value too long
		{1, 0, 0, ' '},               // bad key byte
		{1, 0, 0, 'b', 1, 0, 0, 'a'}, // out of order
		{1, 0, 0, 'a', 1, 0, 0, 'a'}, // duplicate
	} {
		if _, err := ParseRecords(p); !errors.Is(err, ErrRecord) {
			t.Errorf("% x: %v, want ErrRecord", p, err)
		}
	}
}

// FuzzDecode: no input panics the decoder, and whatever it accepts is the
// canonical encoding of what it returned.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(Values{"lan.ipaddr": "192.168.1.1", "wifi.ssid": "gowrt"}, 7)
	f.Add(good)
	f.Add(bytes.Repeat([]byte{0xff}, 32))
	f.Add(good[:HeaderSize])
	f.Add(append(append([]byte(nil), good[:HeaderSize]...), 1, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, v, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrBlank) && !errors.Is(err, ErrLength) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		re, err := Encode(v, seq)
		if err != nil {
			t.Fatalf("decoded %v does not re-encode: %v", v, err)
		}
		n := HeaderSize + int(uint32(b[12])|uint32(b[13])<<8|uint32(b[14])<<16|uint32(b[15])<<24)
		if !bytes.Equal(re[:n], b[:n]) {
			t.Fatalf("accepted a non-canonical copy:\n% x\n% x", b[:n], re[:n])
		}
	})
}

// FuzzParseRecords: no payload panics the record parser; an accepted one
// round-trips.
func FuzzParseRecords(f *testing.F) {
	good, _ := Encode(Values{"a": "1", "b": "22"}, 1)
	f.Add(good[HeaderSize:])
	f.Add([]byte{1, 0, 0, 'a'})
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		v, err := ParseRecords(p)
		if err != nil {
			return
		}
		re, err := Encode(v, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(re[HeaderSize:HeaderSize+len(p)], p) {
			t.Fatalf("payload % x re-encodes as % x", p, re[HeaderSize:])
		}
	})
}
