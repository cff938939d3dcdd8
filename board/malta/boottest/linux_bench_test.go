//go:build linux && !mips && !mipsle

package boottest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/qemu"
)

// benchRAM is the -m both systems get: Debian's kernel wants more than the
// 32 MiB TestRouterQEMU gives gowrt, and the two must run on the same machine.
const benchRAM = 64

// BenchmarkXferMaltaLE measures TCP throughput between the host and a
// firmware service through QEMU's pcnet, for gowrt and, in the same run, for
// Linux on the same emulated machine: qemu-system-mipsel -M malta -m 64,
// the pcnet on a TAP device in a test network namespace, the router test's
// transfer client sending xferBytes to the sink and reading as many from
// the source (internal/xfer, SHA-256 checked), then the same through the
// bulk services (iperf3-style: a repeated block, counted and discarded;
// the bulk-* metrics), which leave the hashing and the stream generation
// out and so weigh the TCP path alone.
//
//   - gowrt: progs/routertest (gVisor's TCP on the bare-metal kernel).
//   - linux: Debian bookworm's 4kc-malta kernel with progs/linuxxfer as
//     /init, serving the same Go code. linuxxfer makes the PCI interrupts
//     level-triggered first, as gowrt does (see there why).
//
// The systems take turns for GOWRT_XFER_ROUNDS rounds (3 unless set), and
// each figure is the median over the rounds: these are wall-clock rates,
// and the host's load moves them by up to 2x between runs.
// XferInstructionsMaltaLE compares the same transfers by instruction count,
// which does not move.
//
// Debian has no big-endian MIPS kernel, so the comparison is little-endian
// only. lanup-ms is QEMU start to the system's "LAN up" console line;
// Linux's includes some 3 s of its zboot stub unpacking the xz-compressed
// kernel before the kernel's own clock starts (its line gives its uptime
// too). The kernel comes from scripts/fetch-linux-malta.sh; benchmarks are
// not run in CI.
//
//	go test -run '^$' -bench XferMaltaLE -benchtime 1x ./board/malta/boottest
func BenchmarkXferMaltaLE(b *testing.B) {
	kdir := linuxMaltaDir(b)
	ns := netns.New(b)
	const tap = "gwbench0"
	ns.Must(b, "ip", "tuntap", "add", "dev", tap, "mode", "tap")
	ns.Must(b, "ip", "addr", "add", "192.168.1.100/24", "dev", tap)
	ns.Must(b, "ip", "link", "set", tap, "up")
	bd, _ := image.LookupBoard("malta-le")
	nic := "tap,ifname=" + tap + ",script=no,downscript=no"

	img, err := images.Build("malta-le", "./board/malta/boottest/progs/routertest")
	if err != nil {
		b.Fatal(err)
	}
	initrd := linuxInitramfs(b, kdir)
	rounds := 3
	if v := os.Getenv("GOWRT_XFER_ROUNDS"); v != "" {
		if rounds, err = strconv.Atoi(v); err != nil || rounds < 1 {
			b.Fatalf("GOWRT_XFER_ROUNDS=%q: want a count of rounds", v)
		}
	}

	// One system at a time: the machine has two cores, and a second QEMU
	// would take CPU from the one being measured. The host's own load
	// moves both systems' rates by up to 2x from one minute to the next,
	// so the systems take turns, each booted afresh per round, and the
	// figures are medians over the rounds: each system's rate, and the
	// ratio within each round.
	names := []string{"up", "down", "bulk-up", "bulk-down"}
	gw, lx := map[string][]float64{}, map[string][]float64{}
	var gwLanUp, lxLanUp []float64
	// measure runs the four transfers on v and appends their rates.
	measure := func(v *vm, into map[string][]float64) error {
		up, down, err := xferRate(b, ns, v, "")
		if err != nil {
			return err
		}
		bulkUp, bulkDown, err := xferRate(b, ns, v, "bulk")
		if err != nil {
			return err
		}
		for i, r := range []float64{up, down, bulkUp, bulkDown} {
			into[names[i]] = append(into[names[i]], r)
		}
		return nil
	}
	for round := range rounds {
		gowrt := startVM(b, ns, "router: board malta, LAN up",
			qemu.Machine{Board: bd, Kernel: img, MemMiB: benchRAM, NIC: nic})
		if err := measure(gowrt, gw); err != nil {
			b.Fatalf("%v\nconsole:\n%s", err, gowrt.console.String())
		}
		gowrt.stop()
		// Both systems answer at 192.168.1.1 from different MACs: forget
		// the other's, or the first connection waits out a stale entry.
		ns.Must(b, "ip", "neigh", "flush", "dev", tap)
		// Linux on this QEMU sometimes loses its network for good midway
		// through a transfer (see XferInstructionsMaltaLE): its round is
		// run again on a freshly booted Linux, as a host would reboot a
		// wedged peer. gowrt gets no such second chance.
		var linux *vm
		for try := 1; ; try++ {
			linux = startVM(b, ns, "linuxxfer: LAN up",
				qemu.Machine{Board: bd, Kernel: filepath.Join(kdir, "vmlinuz"), MemMiB: benchRAM, NIC: nic,
					Append: "console=ttyS0 quiet", Extra: []string{"-initrd", initrd}})
			round := map[string][]float64{}
			err := measure(linux, round)
			linux.stop()
			ns.Must(b, "ip", "neigh", "flush", "dev", tap)
			if err == nil {
				for _, n := range names {
					lx[n] = append(lx[n], round[n]...)
				}
				break
			}
			if try == 3 {
				b.Fatalf("linux, try %d: %v\nconsole:\n%s", try, err, linux.console.String())
			}
			b.Logf("linux, try %d: %v; booting it again", try, err)
		}
		gwLanUp = append(gwLanUp, float64(gowrt.lanUp.Milliseconds()))
		lxLanUp = append(lxLanUp, float64(linux.lanUp.Milliseconds()))
		var line []string
		for _, n := range names {
			g, l := gw[n][round], lx[n][round]
			line = append(line, fmt.Sprintf("%s %.0f/%.0f=%.2f", n, g, l, g/l))
		}
		b.Logf("round %d, gowrt/linux Mbit/s: %s", round+1, strings.Join(line, ", "))
	}

	b.ReportMetric(0, "ns/op") // wall time per iteration means nothing here
	for _, n := range names {
		ratios := make([]float64, rounds)
		for i := range ratios {
			ratios[i] = gw[n][i] / lx[n][i]
		}
		b.ReportMetric(median(gw[n]), "gowrt-"+n+"-Mbit/s")
		b.ReportMetric(median(lx[n]), "linux-"+n+"-Mbit/s")
		b.ReportMetric(median(ratios), "gowrt/linux-"+n)
	}
	b.ReportMetric(median(gwLanUp), "gowrt-lanup-ms")
	b.ReportMetric(median(lxLanUp), "linux-lanup-ms")
}

// median returns the middle value of v (the mean of the middle two when
// their number is even).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// linuxMaltaDir is where scripts/fetch-linux-malta.sh leaves the kernel.
func linuxMaltaDir(b *testing.B) string {
	cache, err := os.UserCacheDir() // $XDG_CACHE_HOME or ~/.cache, as the script
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(cache, "gowrt", "linux-malta-le")
	if _, err := os.Stat(filepath.Join(dir, "modules.order")); err != nil {
		b.Fatalf("no Linux malta kernel in %s; fetch it with:\n\t%s",
			dir, filepath.Join(images.BuildDir, "scripts", "fetch-linux-malta.sh"))
	}
	v, _ := os.ReadFile(filepath.Join(dir, "VERSION"))
	b.Logf("linux: %s", strings.TrimSpace(string(v)))
	return dir
}

// linuxInitramfs builds progs/linuxxfer for mipsle and packs it as /init
// with the fetched modules and their load order into a newc cpio archive.
func linuxInitramfs(b *testing.B, kdir string) string {
	exe := filepath.Join(workDir, "linuxxfer")
	cmd := exec.Command("go", "build", "-trimpath", "-o", exe, "./board/malta/boottest/progs/linuxxfer")
	cmd.Dir = images.BuildDir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=mipsle", "GOMIPS=softfloat", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build linuxxfer: %v\n%s", err, out)
	}
	var c cpio
	c.dir("dev")
	c.char("dev/console", 5, 1) // the kernel opens it for init's stdio
	c.char("dev/port", 1, 4)    // I/O ports: linuxxfer sets the ELCR
	c.dir("modules")
	order, err := os.ReadFile(filepath.Join(kdir, "modules.order"))
	if err != nil {
		b.Fatal(err)
	}
	c.file("modules.order", 0o644, order)
	for _, m := range strings.Fields(string(order)) {
		data, err := os.ReadFile(filepath.Join(kdir, "modules", m+".ko"))
		if err != nil {
			b.Fatal(err)
		}
		c.file("modules/"+m+".ko", 0o644, data)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		b.Fatal(err)
	}
	c.file("init", 0o755, data)
	path := filepath.Join(workDir, "linuxxfer.cpio")
	if err := os.WriteFile(path, c.bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// cpio writes the "newc" cpio format the kernel unpacks as its initramfs:
// per entry a 110-byte ASCII header of hex fields, the NUL-terminated name
// and the data, each padded to 4 bytes; a "TRAILER!!!" entry ends it.
type cpio struct {
	buf bytes.Buffer
	ino int
}

func (c *cpio) entry(name string, mode, rdevMajor, rdevMinor int, data []byte) {
	c.ino++
	nlink := 1
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize, check
	fmt.Fprintf(&c.buf, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
	c.buf.WriteString(name + "\x00")
	c.pad()
	c.buf.Write(data)
	c.pad()
}

func (c *cpio) pad() {
	for c.buf.Len()%4 != 0 {
		c.buf.WriteByte(0)
	}
}

func (c *cpio) dir(name string)                      { c.entry(name, 0o040755, 0, 0, nil) }
func (c *cpio) char(name string, major, minor int)   { c.entry(name, 0o020600, major, minor, nil) }
func (c *cpio) file(name string, perm int, b []byte) { c.entry(name, 0o100000|perm, 0, 0, b) }

// bytes ends the archive and returns it.
func (c *cpio) bytes() []byte {
	c.entry("TRAILER!!!", 0, 0, 0, nil)
	return c.buf.Bytes()
}

// vm is a QEMU malta machine in the namespace, its console collected.
type vm struct {
	console consoleLog
	lanUp   time.Duration // QEMU start to the LAN-up console line
	stop    func()
}

// startVM starts machine m in the namespace and waits for a console line
// starting with upPrefix.
func startVM(b *testing.B, ns *netns.NS, upPrefix string, m qemu.Machine) *vm {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, m.Board.QEMU}, m.Args()...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	v := &vm{}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); pw.Close(); close(exited) }()
	stopped := false
	v.stop = func() { // kills QEMU: neither system stops by itself
		if !stopped {
			stopped = true
			cancel()
			<-exited
		}
	}
	b.Cleanup(v.stop)
	up := make(chan time.Duration, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			l := strings.TrimRight(sc.Text(), "\r")
			v.console.WriteString(l + "\n")
			if strings.HasPrefix(l, upPrefix) {
				up <- time.Since(start)
			}
		}
		close(up)
	}()
	select {
	case d, ok := <-up:
		if !ok {
			b.Fatalf("QEMU exited before %q:\n%s", upPrefix, v.console.String())
		}
		v.lanUp = d
	case <-time.After(2 * time.Minute):
		b.Fatalf("no %q after 2 minutes:\n%s", upPrefix, v.console.String())
	}
	return v
}

// xferRate runs the transfer client in the namespace against 192.168.1.1
// b.N times and returns the mean upload and download Mbit/s; mode "bulk"
// uses the bulk services (GOWRT_XFER_MODE).
func xferRate(b *testing.B, ns *netns.NS, v *vm, mode string) (up, down float64, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	for range b.N {
		var res string
		for try := 0; ; try++ {
			res, err = ns.Exec(150*time.Second, "env", "GOWRT_XFER_HOST=192.168.1.1", "GOWRT_XFER_MODE="+mode,
				fmt.Sprintf("GOWRT_XFER_BYTES=%d", xferBytes), exe)
			// A system just up may miss the first ARP requests on a
			// loaded host: connecting again is not a slower transfer.
			if err == nil || !strings.Contains(res, "dial tcp") || try == 2 {
				break
			}
			b.Logf("transfer client, try %d: %s", try+1, strings.TrimSpace(res))
			time.Sleep(2 * time.Second)
		}
		var mb1, mb2 int
		var u, d float64
		if err == nil {
			_, err = fmt.Sscanf(strings.TrimSpace(res), "xfer ok: %d MB up at %f Mbit/s, %d MB down at %f Mbit/s", &mb1, &u, &mb2, &d)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("transfer client: %v\n%s", err, res)
		}
		b.Log(strings.TrimSpace(res))
		up += u
		down += d
	}
	return up / float64(b.N), down / float64(b.N), nil
}
