//go:build linux && !mips && !mipsle

package firmware_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/internal/wantest"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nictest"
	"github.com/gowrt/gowrt/sys/supervisor"
)

// watchdogBoard is a board with a (fake) hardware watchdog.
type watchdogBoard struct {
	tapBoard
	mu            sync.Mutex
	armed         time.Duration
	pets, disarms int
}

var _ board.Watchdog = (*watchdogBoard)(nil)

func (b *watchdogBoard) Arm(d time.Duration) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = d
	return d, nil
}

func (b *watchdogBoard) Pet() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pets++
}

func (b *watchdogBoard) Disarm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = 0
	b.disarms++
}

// TestFirmwareWatchdogService: on a board with a watchdog, the firmware
// runs the "watchdog" service, which arms it with Options.WatchdogTimeout
// and pets it while the firmware's critical services run; Stop disarms it.
func TestFirmwareWatchdogService(t *testing.T) {
	lan, _ := nictest.Pair(nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 1, 1}}, nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 1, 2}})
	b := &watchdogBoard{tapBoard: tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{{Name: "lan1", Role: board.LAN, NIC: lan}}}}
	const timeout = 300 * time.Millisecond
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: &wantest.SyncBuffer{}, WatchdogTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "three pets", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.pets >= 3
	})
	b.mu.Lock()
	armed := b.armed
	b.mu.Unlock()
	if armed != timeout {
		t.Fatalf("armed %v, want %v", armed, timeout)
	}
	running := false
	for _, st := range f.Sup.Status() {
		if st.Name == "watchdog" && st.State == supervisor.StateRunning {
			running = true
		}
	}
	if !running {
		t.Fatalf("no running watchdog service: %+v", f.Sup.Status())
	}
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.armed != 0 || b.disarms != 1 {
		t.Fatalf("after Stop: armed %v, %d disarms", b.armed, b.disarms)
	}
}
