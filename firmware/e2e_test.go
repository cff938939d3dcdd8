//go:build linux && !mips && !mipsle

package firmware_test

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/internal/wantest"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/tap"
	"github.com/gowrt/gowrt/sys/supervisor"
)

func TestMain(m *testing.M) { wantest.Main(m) }

// tapBoard is a board whose ports are TAP devices and whose storage is
// RAM: the firmware as a host process, cabled to test namespaces.
type tapBoard struct {
	ports []board.Port
	mem   *memStorage
}

func (b *tapBoard) Name() string                           { return "tap" }
func (b *tapBoard) Ports() ([]board.Port, error)           { return b.ports, nil }
func (b *tapBoard) Store(name string) (board.Store, error) { return b.mem.item(name), nil }

type memStorage struct {
	mu    sync.Mutex
	items map[string][]byte
}

func (m *memStorage) item(name string) board.Store { return memItem{m, name} }

type memItem struct {
	m    *memStorage
	name string
}

func (i memItem) Load() ([]byte, error) {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	return bytes.Clone(i.m.items[i.name]), nil
}

func (i memItem) Save(b []byte) error {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	i.m.items[i.name] = bytes.Clone(b)
	return nil
}

// syncBuffer is the console: written by the firmware, read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func openTAP(t *testing.T, i int) (gnet.NIC, string) {
	t.Helper()
	d, err := tap.Open("")
	if err != nil {
		t.Fatal(err)
	}
	return tap.NewNIC(d, gnet.MAC{0x02, 0x67, 0x77, 0, 0, byte(i)}), d.Name()
}

// crashy panics every time it runs: the supervisor must back off and
// park it while the rest runs on.
func crashy(context.Context) error { panic("crashy: this service always panics") }

// artifacts is where screenshots go.
func artifacts(t *testing.T) string {
	if d := os.Getenv("GOWRT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestFirmwareManagement: the firmware, freshly booted with nothing
// stored, on TAP ports: the web UI's first-boot login in Chromium, SSH
// with the key set there, a DHCP change applied without a reboot, a
// panicking service parked while the router forwards, and the security
// scan (wantest.CheckManagement).
func TestFirmwareManagement(t *testing.T) {
	lan1, lan1Dev := openTAP(t, 1)
	lan2, lan2Dev := openTAP(t, 2)
	wan, wanDev := openTAP(t, 3)
	far := wantest.New(t, wanDev, 2*time.Minute)
	b := &tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{
		{Name: "lan1", Role: board.LAN, NIC: lan1}, {Name: "lan2", Role: board.LAN, NIC: lan2},
		{Name: "wan", Role: board.WAN, NIC: wan}}}
	console := &syncBuffer{}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: console,
		Services: []supervisor.Service{{Name: "crashy", Restart: supervisor.Always, Run: crashy,
			MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, CrashLoop: 5, CrashWindow: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	far.CheckManagement(t, [2]string{lan1Dev, lan2Dev}, wantest.Management{
		Console: console.String, Crashy: "crashy", Artifacts: artifacts(t)})

	// What was committed is in the board's storage.
	if s, _ := b.Store(firmware.StoreConfig); s != nil {
		if blob, _ := s.Load(); !bytes.Contains(blob, []byte("'120'")) {
			t.Errorf("stored configuration lacks the new DHCP start:\n%s", blob)
		}
	}
}
