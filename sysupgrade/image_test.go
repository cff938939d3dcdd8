package sysupgrade_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/sysupgrade"
)

const board = "tl-wdr4300"

func signed(t testing.TB, fw []byte, b, version string) []byte {
	t.Helper()
	_, priv := testKey(1)
	img, err := sysupgrade.Sign(fw, sysupgrade.Metadata{Board: b, Version: version}, priv)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestSignVerify(t *testing.T) {
	pub, _ := testKey(1)
	fw := mkUImage(randBytes(1, 5000), "gowrt")
	img := signed(t, fw, board, "1.2.3")
	md, got, err := sysupgrade.Verify(img, board, pub)
	if err != nil {
		t.Fatal(err)
	}
	if md.Board != board || md.Version != "1.2.3" || md.Size != int64(len(fw)) || md.SHA256 != sha256.Sum256(fw) {
		t.Fatalf("metadata %+v", md)
	}
	if !bytes.Equal(got, fw) || &got[0] != &img[len(img)-len(fw)] {
		t.Fatal("firmware is not the image's own tail")
	}
	// The layout the package documentation gives.
	mlen := 1 + len(board) + 1 + len("1.2.3") + 8 + 32
	if string(img[:8]) != "GOWRTUPG" || binary.BigEndian.Uint16(img[8:]) != 1 ||
		int(binary.BigEndian.Uint16(img[10:])) != mlen || len(img) != 12+mlen+64+len(fw) ||
		img[12] != byte(len(board)) || string(img[13:13+len(board)]) != board {
		t.Fatalf("layout: % x", img[:40])
	}
	if binary.BigEndian.Uint64(img[12+mlen-40:]) != uint64(len(fw)) {
		t.Fatal("size field")
	}
}

func TestSignRefuses(t *testing.T) {
	_, priv := testKey(1)
	for _, c := range []struct {
		fw      []byte
		b, v    string
		wantErr error
	}{
		{nil, board, "1", sysupgrade.ErrFormat},
		{[]byte{1}, "", "1", sysupgrade.ErrFormat},
		{[]byte{1}, "has space", "1", sysupgrade.ErrFormat},
		{[]byte{1}, board, strings.Repeat("v", 65), sysupgrade.ErrFormat},
		{[]byte{1}, board, "ver\n", sysupgrade.ErrFormat},
	} {
		if _, err := sysupgrade.Sign(c.fw, sysupgrade.Metadata{Board: c.b, Version: c.v}, priv); !errors.Is(err, c.wantErr) {
			t.Errorf("Sign(%d bytes, %q, %q) = %v, want %v", len(c.fw), c.b, c.v, err, c.wantErr)
		}
	}
	if _, err := sysupgrade.Sign([]byte{1}, sysupgrade.Metadata{Board: board, Version: "1"}, priv[:10]); !errors.Is(err, sysupgrade.ErrKey) {
		t.Errorf("short key: %v", err)
	}
}

func TestVerifyTruncated(t *testing.T) {
	pub, _ := testKey(1)
	fw := mkUImage(randBytes(2, 3000), "gowrt")
	img := signed(t, fw, board, "1.0")
	mlen := int(binary.BigEndian.Uint16(img[10:]))
	for _, n := range []int{0, 1, 11, 12, 12 + mlen, 12 + mlen + 63, 12 + mlen + 64, 12 + mlen + 65, len(img) - 1000, len(img) - 1} {
		_, _, err := sysupgrade.Verify(img[:n], board, pub)
		var te *sysupgrade.TruncatedError
		if !errors.Is(err, sysupgrade.ErrTruncated) || !errors.As(err, &te) {
			t.Fatalf("%d of %d bytes: %v", n, len(img), err)
		}
		want := int64(len(img) - n) // once the signed header is there, the exact count
		if n < 12 {
			want = int64(12 - n)
		} else if n < 12+mlen+64 {
			want = int64(12 + mlen + 64 - n)
		}
		if te.Missing() != want || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("%d of %d bytes: %v: missing %d, want %d", n, len(img), err, te.Missing(), want)
		}
		t.Logf("%d bytes: %v", n, err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	pub, _ := testKey(1)
	otherPub, _ := testKey(2)
	fw := mkUImage(randBytes(3, 3000), "gowrt")
	img := signed(t, fw, board, "1.0")
	mlen := int(binary.BigEndian.Uint16(img[10:]))
	sigOff := 12 + mlen
	flip := func(i int, bit byte) []byte {
		b := bytes.Clone(img)
		b[i] ^= bit
		return b
	}
	cases := []struct {
		name  string
		img   []byte
		board string
		pub   []byte
		want  error
		text  string
	}{
		{"wrong board", signed(t, fw, "archer-c7-v2", "1.0"), board, pub, sysupgrade.ErrBoard, `image is for board "archer-c7-v2", this is "tl-wdr4300"`},
		{"bit in firmware", flip(len(img)-1, 0x10), board, pub, sysupgrade.ErrHash, ""},
		{"bit in uImage header", flip(sigOff+64+4, 1), board, pub, sysupgrade.ErrHash, ""},
		{"bit in version", flip(12+1+len(board)+1, 0x01), board, pub, sysupgrade.ErrSignature, ""},
		{"bit in board", flip(13, 0x02), board, pub, sysupgrade.ErrSignature, ""},
		{"bit in hash", flip(sigOff-1, 0x80), board, pub, sysupgrade.ErrSignature, ""},
		{"bit in signature", flip(sigOff+10, 0x04), board, pub, sysupgrade.ErrSignature, ""},
		{"wrong key", img, board, otherPub, sysupgrade.ErrSignature, ""},
		{"short key", img, board, pub[:31], sysupgrade.ErrKey, ""},
		{"version 2", flip(9, 3), board, pub, sysupgrade.ErrVersion, "version"},
		{"magic", flip(0, 1), board, pub, sysupgrade.ErrFormat, "magic"},
		{"trailing byte", append(bytes.Clone(img), 0), board, pub, sysupgrade.ErrFormat, "1 bytes after"},
		{"metadata length", flip(11, 1), board, pub, sysupgrade.ErrFormat, ""},
	}
	for _, c := range cases {
		_, fw, err := sysupgrade.Verify(c.img, c.board, c.pub)
		if !errors.Is(err, c.want) || fw != nil || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v (firmware %d bytes), want %v %q", c.name, err, len(fw), c.want, c.text)
		}
		t.Logf("%s: %v", c.name, err)
	}
	// Every single-bit flip of the signed header and signature is refused.
	for i := 0; i < sigOff+64; i++ {
		for bit := 0; bit < 8; bit++ {
			if _, _, err := sysupgrade.Verify(flip(i, 1<<bit), board, pub); err == nil {
				t.Fatalf("flip of bit %d of byte %d accepted", bit, i)
			}
		}
	}
}

// FuzzVerify: random bytes and mutations of a valid image never panic and
// only the valid image itself is accepted.
func FuzzVerify(f *testing.F) {
	pub, _ := testKey(1)
	fw := mkUImage(randBytes(4, 300), "gowrt")
	valid := signed(f, fw, board, "1.0")
	f.Add(valid)
	f.Add(valid[:100])
	f.Add(valid[:12])
	f.Add(append(bytes.Clone(valid), 1))
	f.Add(signed(f, fw, "other", "1.0"))
	f.Add([]byte("GOWRTUPG\x00\x01\x00\x30"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, img []byte) {
		md, got, err := sysupgrade.Verify(img, board, pub)
		if err == nil {
			if !bytes.Equal(img, valid) || !bytes.Equal(got, fw) || md.Size != int64(len(fw)) {
				t.Fatalf("accepted %d bytes that are not the signed image", len(img))
			}
		} else if got != nil {
			t.Fatal("firmware returned with an error")
		}
	})
}
