//go:build linux && !mips && !mipsle

package boottest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/wantest"
)

// TestFirmwareManagementQEMU is the management issue's whole check
// (wantest.CheckManagement: first-boot login in Chromium, SSH with a key,
// a DHCP change applied live, a panicking service parked while the router
// forwards, the LAN and WAN scans and refused writes) on the firmware
// booted fresh on QEMU malta, both byte orders, at -m 32.
func TestFirmwareManagementQEMU(t *testing.T) {
	for i, board := range boards {
		t.Run(board, func(t *testing.T) {
			lanTap, wanTap, out := bootOnTAPs(t, board, 10+i, "./board/malta/boottest/progs/firmwaretest")
			far := wantest.New(t, wanTap, 2*time.Minute)
			dir := t.TempDir()
			if d := os.Getenv("GOWRT_ARTIFACTS"); d != "" {
				dir = filepath.Join(d, board)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			far.CheckManagement(t, wantest.Switch(t, lanTap), wantest.Management{
				Console: out.String, Crashy: "crashy", Artifacts: dir, KernelLog: "router: port wan"})
		})
	}
}
