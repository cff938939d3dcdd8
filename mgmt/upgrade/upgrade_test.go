package upgrade

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/flash/flashtest"
	"github.com/gowrt/gowrt/sysupgrade"
)

const block = 0x1000

type rig struct {
	dev     *flashtest.RAM
	u       *Upgrader
	priv    ed25519.PrivateKey
	reboots int
}

func newRig(t *testing.T) *rig {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{dev: flashtest.New(16*block, block), priv: priv}
	// Old firmware and a configuration in place.
	r.dev.Program(0, bytes.Repeat([]byte("old-firmware"), 100))
	r.dev.Program(12*block, []byte("config"))
	r.u = New(Config{Board: "tl-wdr4300", Key: pub,
		Target: func() (sysupgrade.Target, error) {
			return sysupgrade.Target{Flash: r.dev, FirmwareLen: 12 * block, ConfigOff: 12 * block, ConfigLen: 2 * block}, nil
		},
		Reboot: func() error { r.reboots++; return nil }})
	return r
}

func (r *rig) image(t *testing.T, board string, fw []byte) []byte {
	img, err := sysupgrade.Sign(fw, sysupgrade.Metadata{Board: board, Version: "2.0"}, r.priv)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestUpgrade: a good image is written, the configuration kept; -n erases
// it; -T writes nothing.
func TestUpgrade(t *testing.T) {
	r := newRig(t)
	fw := bytes.Repeat([]byte("new firmware "), 1000)
	img := r.image(t, "tl-wdr4300", fw)
	before := r.dev.Bytes()
	res, err := r.u.Upgrade(context.Background(), bytes.NewReader(img), Request{KeepConfig: true, Test: true})
	if err != nil || res.Written || res.Metadata.Version != "2.0" || !bytes.Equal(r.dev.Bytes(), before) {
		t.Fatalf("test-only: %+v %v; flash changed: %v", res, err, !bytes.Equal(r.dev.Bytes(), before))
	}
	var progress strings.Builder
	res, err = r.u.Upgrade(context.Background(), bytes.NewReader(img), Request{KeepConfig: true, Progress: &progress})
	if err != nil || !res.Written {
		t.Fatalf("upgrade: %+v %v", res, err)
	}
	got := r.dev.Bytes()
	if !bytes.Equal(got[:len(fw)], fw) || !bytes.HasPrefix(got[12*block:], []byte("config")) {
		t.Fatal("firmware not written or configuration not kept")
	}
	if n := strings.Count(progress.String(), "written"); n < 2 || n > 11 {
		t.Fatalf("%d progress lines:\n%s", n, progress.String())
	}
	if _, err := r.u.Upgrade(context.Background(), bytes.NewReader(img), Request{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.dev.Bytes()[12*block:14*block], bytes.Repeat([]byte{0xFF}, 2*block)) {
		t.Fatal("-n left the configuration")
	}
	if r.reboots != 0 {
		t.Fatal("Upgrade rebooted by itself")
	}
}

// TestRefused: every bad image is refused before anything is written.
func TestRefused(t *testing.T) {
	r := newRig(t)
	fw := bytes.Repeat([]byte{0x5A}, 3*block)
	good := r.image(t, "tl-wdr4300", fw)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	badSig, _ := sysupgrade.Sign(fw, sysupgrade.Metadata{Board: "tl-wdr4300", Version: "2.0"}, other)
	flipped := bytes.Clone(good)
	flipped[len(flipped)-1] ^= 1
	cases := map[string]struct {
		img  []byte
		want error
	}{
		"wrong board":   {r.image(t, "archer-c7-v2", fw), sysupgrade.ErrBoard},
		"truncated":     {good[:len(good)-100], sysupgrade.ErrTruncated},
		"bad signature": {badSig, sysupgrade.ErrSignature},
		"corrupted":     {flipped, sysupgrade.ErrHash},
		"too big":       {r.image(t, "tl-wdr4300", make([]byte, 13*block)), ErrTooBig},
		"empty":         {nil, sysupgrade.ErrTruncated},
	}
	before := r.dev.Bytes()
	for name, c := range cases {
		_, err := r.u.Upgrade(context.Background(), bytes.NewReader(c.img), Request{KeepConfig: true})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if !bytes.Equal(r.dev.Bytes(), before) || r.dev.Erases != 0 || r.dev.Writes != 2 {
		t.Fatalf("a refused image wrote: %d erases, %d programs", r.dev.Erases, r.dev.Writes)
	}
	noKey := New(Config{Board: "x"})
	if _, err := noKey.Upgrade(context.Background(), bytes.NewReader(good), Request{}); !errors.Is(err, ErrNoKey) {
		t.Fatal(err)
	}
	pub := r.priv.Public().(ed25519.PublicKey)
	noFlash := New(Config{Board: "x", Key: pub})
	if _, err := noFlash.Upgrade(context.Background(), bytes.NewReader(good), Request{}); !errors.Is(err, ErrNoFlash) {
		t.Fatal(err)
	}
}

// TestBusy: a second upgrade while one runs is refused at once.
func TestBusy(t *testing.T) {
	r := newRig(t)
	r.u.busy.Lock()
	_, err := r.u.Upgrade(context.Background(), strings.NewReader(""), Request{})
	r.u.busy.Unlock()
	if !errors.Is(err, ErrBusy) {
		t.Fatal(err)
	}
}

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args       []string
		keep, test bool
		err        string
	}{
		{nil, true, false, ""},
		{[]string{"-n", "-"}, false, false, ""},
		{[]string{"-T"}, true, true, ""},
		{[]string{"-x"}, false, false, "unknown option -x"},
		{[]string{"/tmp/fw.bin"}, false, false, "pipe the image"},
	} {
		req, err := ParseArgs(c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || req.KeepConfig != c.keep || req.Test != c.test {
			t.Errorf("%q: %+v %v", c.args, req, err)
		}
	}
}
