package sim_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/sim"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/mgmt/upgrade"
	"github.com/gowrt/gowrt/sysupgrade"
)

// TestTwinFirmwareFlash: the firmware on a TL-WDR4300's twin keeps its
// configuration in the board's SPI flash (model) and finds it after a
// power cycle, and a signed upgrade lands in the firmware partition
// with the configuration kept: the router's storage and sysupgrade paths
// through the SPI NOR driver and the board's layout, as on the router.
func TestTwinFirmwareFlash(t *testing.T) {
	b := boardfile.TLWDR4300
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	boot := func(image []byte, seed uint64) (*sim.Twin, *firmware.Firmware) {
		tw, err := sim.NewTwin(b, sim.TwinConfig{Seed: seed, FlashImage: image, Log: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		f, err := firmware.Start(context.Background(), firmware.Options{Board: tw, Version: "1.0",
			Console: &wantest.SyncBuffer{}, UpgradeKey: pub, Reboot: func() error { return nil }})
		if err != nil {
			tw.Close()
			t.Fatal(err)
		}
		return tw, f
	}
	tw, f := boot(nil, 1)
	if err := f.Config.Set("system.@system[0].hostname", "attic"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Config.Commit(); err != nil {
		t.Fatal(err)
	}
	fw := bytes.Repeat([]byte("gowrt 2.0 "), 10000)
	img, err := sysupgrade.Sign(fw, sysupgrade.Metadata{Board: b.Name, Version: "2.0"}, priv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := f.Upgrader.Upgrade(ctx, bytes.NewReader(img), upgrade.Request{KeepConfig: true})
	if err != nil || !res.Written {
		t.Fatalf("upgrade: %+v %v", res, err)
	}
	f.Stop()
	image := tw.Flash.Image()
	if n := tw.Misuses(); n != 0 {
		t.Fatalf("%d hardware misuses", n)
	}
	tw.Close()
	fwPart, _ := b.Part(boardfile.PartFirmware)
	if !bytes.Equal(image[fwPart.Offset:fwPart.Offset+int64(len(fw))], fw) {
		t.Fatal("the firmware partition does not hold the upgrade")
	}

	tw2, f2 := boot(image, 2)
	defer tw2.Close()
	defer f2.Stop()
	if h := f2.Config.Snapshot().System.Hostname; h != "attic" {
		t.Fatalf("after the power cycle the host name is %q", h)
	}
}
