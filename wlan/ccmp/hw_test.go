package ccmp

import (
	"bytes"
	"errors"
	"testing"
)

// hwDecrypt is what a key cache hands up: the frame decrypted with the
// CCMP header kept and the MIC removed.
func hwDecrypt(t *testing.T, enc []byte) []byte {
	t.Helper()
	h, err := parseHeader(enc)
	if err != nil {
		t.Fatal(err)
	}
	ch := append([]byte{}, enc[h.len:h.len+HeaderLen]...)
	k, _ := NewKey(bytes.Repeat([]byte{9}, 16), int(ch[3]>>6))
	plain, err := k.Decap(append([]byte{}, enc...))
	if err != nil {
		t.Fatal(err)
	}
	out := append(append([]byte{}, plain[:h.len]...), ch...)
	out = append(out, plain[h.len:]...)
	out[1] |= fcProtected
	return out
}

func TestAcceptDecrypted(t *testing.T) {
	tx, _ := NewKey(bytes.Repeat([]byte{9}, 16), 0)
	rx, _ := NewKey(bytes.Repeat([]byte{9}, 16), 0)
	for _, a4 := range []bool{false, true} {
		f := qosFrame(2, a4, 100)
		orig := append([]byte{}, f...)
		enc, err := tx.Encap(f)
		if err != nil {
			t.Fatal(err)
		}
		pn, err := ReadPN(enc)
		if err != nil || pn != tx.TxPN() {
			t.Fatalf("ReadPN = %d, %v; want %d", pn, err, tx.TxPN())
		}
		dec := hwDecrypt(t, enc)
		replay := append([]byte{}, dec...)
		got, err := rx.AcceptDecrypted(dec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, orig) {
			t.Fatalf("a4=%v: plaintext differs\n got %x\nwant %x", a4, got, orig)
		}
		if _, err := rx.AcceptDecrypted(replay); !errors.Is(err, ErrReplay) {
			t.Fatalf("replay: %v", err)
		}
	}
	if rx.Stats.Replays.Load() != 2 {
		t.Fatalf("Replays = %d", rx.Stats.Replays.Load())
	}
	// Not protected, wrong key ID, short: refused, never a panic.
	f := qosFrame(0, false, 10)
	if _, err := rx.AcceptDecrypted(f); !errors.Is(err, ErrNotProtected) {
		t.Fatalf("unprotected: %v", err)
	}
	g, _ := NewKey(bytes.Repeat([]byte{9}, 16), 1)
	enc, _ := tx.Encap(qosFrame(0, false, 10))
	if _, err := g.AcceptDecrypted(hwDecrypt(t, enc)); !errors.Is(err, ErrKeyID) {
		t.Fatalf("key ID: %v", err)
	}
	for n := 0; n < 34; n++ {
		_, _ = rx.AcceptDecrypted(append([]byte{}, enc[:n]...))
	}
	if n, err := HeaderLenOf(enc); err != nil || n != 26 {
		t.Fatalf("HeaderLenOf = %d, %v", n, err)
	}
}

func TestAcceptDecryptedNoAllocs(t *testing.T) {
	tx, _ := NewKey(bytes.Repeat([]byte{9}, 16), 0)
	rx, _ := NewKey(bytes.Repeat([]byte{9}, 16), 0)
	var frames [][]byte
	for i := 0; i < 110; i++ {
		enc, _ := tx.Encap(qosFrame(0, false, 1500))
		frames = append(frames, hwDecrypt(t, enc))
	}
	i := 0
	if a := testing.AllocsPerRun(100, func() {
		if _, err := rx.AcceptDecrypted(frames[i]); err != nil {
			t.Fatal(err)
		}
		i++
	}); a != 0 {
		t.Fatalf("%v allocs per frame", a)
	}
}
