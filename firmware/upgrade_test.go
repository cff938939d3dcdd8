//go:build linux && !mips && !mipsle

package firmware_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/flash/flashtest"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/sysupgrade"
)

// flashBoard is a tapBoard with a boot flash: firmware partition, then
// the configuration partition.
type flashBoard struct {
	tapBoard
	dev *flashtest.RAM
}

const (
	fwBlock = 0x10000
	fwLen   = 8 * fwBlock
)

func (b *flashBoard) FirmwareFlash() (board.FirmwareFlash, error) {
	return board.FirmwareFlash{Flash: b.dev, FirmwareLen: fwLen, ConfigOff: fwLen, ConfigLen: 2 * fwBlock}, nil
}

// TestFirmwareUpgradeSSH: sysupgrade over SSH with OpenSSH's client, the
// image on standard input: -T verifies and writes nothing; a wrong-board,
// truncated or badly signed image is refused with its reason and nothing
// written; a good one is written, the configuration kept, and the device
// reboots.
func TestFirmwareUpgradeSSH(t *testing.T) {
	lan, lanDev := openTAP(t, 1)
	wan, _ := openTAP(t, 3)
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b := &flashBoard{tapBoard: tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{
		{Name: "lan", Role: board.LAN, NIC: lan}, {Name: "wan", Role: board.WAN, NIC: wan}}},
		dev: flashtest.New(16*fwBlock, fwBlock)}
	b.dev.Program(fwLen, []byte("stored configuration"))

	c := wantest.NewClient(t, lanDev)
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := c.NS.Exec(30*time.Second, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "admin", "-f", key); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	authorized, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	seedConfig(t, &b.tapBoard, nil, map[string][]string{"system.@system[0].authorized_keys": {strings.TrimSpace(string(authorized))}})

	var reboots atomic.Int32
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "1.0", Console: &wantest.SyncBuffer{},
		UpgradeKey: pub, Reboot: func() error { reboots.Add(1); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	c.DHCP(t, 60*time.Second)

	fw := bytes.Repeat([]byte("gowrt firmware 2.0 "), 20000)
	sign := func(boardName string, k ed25519.PrivateKey) []byte {
		img, err := sysupgrade.Sign(fw, sysupgrade.Metadata{Board: boardName, Version: "2.0"}, k)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	good := sign("tap", priv)
	write := func(name string, img []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, img, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sysupgrade := func(args, file string) (string, error) {
		return c.NS.Exec(90*time.Second, "sh", "-c", "ssh -i "+key+" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"+
			" -o BatchMode=yes -o ConnectTimeout=20 -o LogLevel=ERROR root@192.168.1.1 sysupgrade "+args+" < "+file)
	}
	before := b.dev.Bytes()
	for _, bad := range []struct{ name, want string }{
		{write("wrong-board", sign("archer-c7-v2", priv)), `image is for board "archer-c7-v2"`},
		{write("truncated", good[:len(good)/2]), "truncated"},
		{write("bad-signature", sign("tap", otherKey)), "not signed by this firmware's key"},
	} {
		out, err := sysupgrade("-", bad.name)
		if err == nil || !strings.Contains(out, bad.want) {
			t.Errorf("%s: err %v, output %q; want a refusal naming %q", filepath.Base(bad.name), err, out, bad.want)
		}
	}
	goodFile := write("good", good)
	if out, err := sysupgrade("-T -", goodFile); err != nil || !strings.Contains(out, "nothing written") {
		t.Fatalf("sysupgrade -T: %v\n%s", err, out)
	}
	if !bytes.Equal(b.dev.Bytes(), before) || reboots.Load() != 0 {
		t.Fatal("a refused or test-only upgrade wrote to the flash or rebooted")
	}
	out, err := sysupgrade("-", goodFile)
	if err != nil || !strings.Contains(out, "firmware 2.0 written; rebooting") {
		t.Fatalf("sysupgrade: %v\n%s", err, out)
	}
	got := b.dev.Bytes()
	if !bytes.Equal(got[:len(fw)], fw) {
		t.Fatal("the firmware partition does not hold the new firmware")
	}
	if !bytes.HasPrefix(got[fwLen:], []byte("stored configuration")) {
		t.Fatal("the configuration partition was not kept")
	}
	if reboots.Load() != 1 {
		t.Fatalf("%d reboots after the upgrade, want 1", reboots.Load())
	}
}
