//go:build linux

// Command linuxxfer is /init of the Linux initramfs that BenchmarkXferMaltaLE
// boots beside gowrt as the comparison point: an ordinary Linux program (it
// does not import gowrt's kernel) that loads the NIC driver, brings up eth0
// at the router's LAN address and serves the same TCP sink and source as
// progs/routertest (internal/xfer), so that both systems face the same
// client on the same emulated pcnet.
//
// It expects the modules under /modules, loaded in the order /modules.order
// names them (dependencies first), and /dev/console and /dev/port in the
// initramfs. As PID 1 it must not exit: on failure it resets the machine,
// which ends QEMU (-no-reboot).
package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gowrt/gowrt/internal/xfer"
	"golang.org/x/sys/unix"
)

const (
	ifName = "eth0"
	addr   = "192.168.1.1"
	mask   = "255.255.255.0"
)

func main() {
	if err := pciLevelTriggered(); err != nil {
		fail(err)
	}
	if err := loadModules("/modules.order", "/modules"); err != nil {
		fail(err)
	}
	if err := ifUp(ifName, addr, mask); err != nil {
		fail(err)
	}
	// The same services as routertest (internal/xfer), on Linux's TCP.
	logf := func(f string, a ...any) { fmt.Printf(f+"\n", a...) }
	for _, svc := range []struct {
		port  int
		serve func(net.Listener, func(string, ...any)) error
	}{{xfer.SinkPort, xfer.ServeSink}, {xfer.SourcePort, xfer.ServeSource},
		{xfer.DiscardPort, xfer.ServeDiscard}, {xfer.FillPort, xfer.ServeFill}} {
		ln, err := net.Listen("tcp4", fmt.Sprintf(":%d", svc.port))
		if err != nil {
			fail(err)
		}
		go svc.serve(ln, logf)
	}
	if err := serveCounters(":6060"); err != nil {
		fail(err)
	}
	// Printed once the services listen: the benchmark connects on seeing it.
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	fmt.Printf("linuxxfer: LAN up at %s/24 on %s after %d ms of uptime\n", addr, ifName, ts.Nano()/1e6)
	select {}
}

// loadModules loads each module named in the order file from dir with
// finit_module(2). The kernel's signature check is not enforced by Debian's
// config (CONFIG_MODULE_SIG_FORCE unset), and the modules are Debian's own.
func loadModules(orderFile, dir string) error {
	f, err := os.Open(orderFile)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if name == "" {
			continue
		}
		m, err := os.Open(dir + "/" + name + ".ko")
		if err != nil {
			return err
		}
		err = unix.FinitModule(int(m.Fd()), "", 0)
		m.Close()
		if err != nil {
			return fmt.Errorf("finit_module %s: %w", name, err)
		}
	}
	return sc.Err()
}

// pciLevelTriggered makes the i8259's IRQ 10 and 11 (Malta's PCI
// interrupts; the pcnet's is 10) level-triggered in the PIIX4's ELCR, port
// 0x4d1, as gowrt's pcnet driver does for its line. QEMU's -kernel boot
// leaves the ELCR at its reset value, all edge (this program read 0), and
// Linux 6.1 does not change it, while QEMU's i8259 in edge mode raises no
// new interrupt for a line still high after the EOI. Before this, 3 of 27
// Linux boots here lost the host for good (no ARP reply, or a transfer
// stuck midway), none of 22 since: too few to be sure, and lost interrupts
// as the cause are a likely story, not a proven one.
func pciLevelTriggered() error {
	f, err := os.OpenFile("/dev/port", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var elcr [1]byte
	if _, err := f.ReadAt(elcr[:], 0x4d1); err != nil {
		return fmt.Errorf("read ELCR: %w", err)
	}
	elcr[0] |= 1<<(10-8) | 1<<(11-8)
	if _, err := f.WriteAt(elcr[:], 0x4d1); err != nil {
		return fmt.Errorf("write ELCR: %w", err)
	}
	return nil
}

// ifUp gives the interface an IPv4 address and netmask and sets it up, with
// the same ioctls ifconfig uses. The PCI probe may finish after
// finit_module returns, so a missing interface is retried for a while.
func ifUp(name, ip, netmask string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	set := func(req uint, v string) error {
		ifr, err := unix.NewIfreq(name)
		if err != nil {
			return err
		}
		if err := ifr.SetInet4Addr(net.ParseIP(v).To4()); err != nil {
			return err
		}
		return unix.IoctlIfreq(fd, req, ifr)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err = set(unix.SIOCSIFADDR, ip)
		if err != unix.ENODEV || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("%s: SIOCSIFADDR: %w", name, err)
	}
	if err := set(unix.SIOCSIFNETMASK, netmask); err != nil {
		return fmt.Errorf("%s: SIOCSIFNETMASK: %w", name, err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s: SIOCGIFFLAGS: %w", name, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s: SIOCSIFFLAGS: %w", name, err)
	}
	return nil
}

// serveCounters answers GET /debug/gowrt/counters on addr with what
// routertest's handler of that path answers, from Linux's own accounts, so
// that XferInstructionsMaltaLE measures both systems alike under -icount
// (one emulated ns per instruction):
//
//   - uptime_ns, busy_ns: time since boot and the part of it the CPU was
//     not idle (busyTimes: the busy time is a sample, one every 4 ms).
//   - segs_in, segs_out: eth0's received and sent frames (/proc/net/dev),
//     the link frames routertest counts too.
//   - retransmits: Tcp RetransSegs in /proc/net/snmp.
//   - mallocs: this program's heap allocations.
func serveCounters(addr string) error {
	if err := os.MkdirAll("/proc", 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", "/proc", "proc", 0, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/gowrt/counters", func(w http.ResponseWriter, _ *http.Request) {
		up, busy, err := busyTimes()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		rx, tx, err := linkFrames(ifName)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		retrans, err := snmpField("Tcp:", "RetransSegs")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		irqs, err := interrupts()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(w, "uptime_ns=%d busy_ns=%d segs_in=%d segs_out=%d retransmits=%d mallocs=%d interrupts=%d\n",
			up, busy, rx, tx, retrans, ms.Mallocs, irqs)
	})
	go http.Serve(ln, mux)
	return nil
}

// busyTimes returns the time since boot and how much of it the CPU was not
// idle, in ns. Debian's malta kernel keeps a periodic 250 Hz tick and
// tick-based CPU accounting (CONFIG_HZ_PERIODIC, CONFIG_TICK_CPU_ACCOUNTING,
// no IRQ_TIME_ACCOUNTING in its config): each tick charges 4 ms to what it
// interrupted, so the idle time is a sample, one every 4 M instructions
// under -icount, printed by /proc/stat in USER_HZ (100) units. Its "cpu"
// line's fourth and fifth fields are idle and iowait. The uptime is
// CLOCK_BOOTTIME, exact.
func busyTimes() (uptime, busy uint64, err error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, 0, err
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: first line %q", line)
	}
	var idle uint64
	for _, v := range f[4:6] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %q: %w", line, err)
		}
		idle += n * (1e9 / userHz)
	}
	uptime = uint64(ts.Nano())
	return uptime, uptime - min(idle, uptime), nil
}

// interrupts returns the interrupts serviced since boot, all sources
// (the tick's too): /proc/stat's "intr" line, whose first number is the
// total.
func interrupts() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "intr" {
			return strconv.ParseUint(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/stat: no intr line")
}

// userHz is the unit of /proc/stat's times (USER_HZ, fixed at 100 in the
// kernel's ABI for MIPS).
const userHz = 100

// linkFrames returns the frames interface dev received and sent, from
// /proc/net/dev: after "dev:", 8 receive counters then 8 transmit ones,
// packets second in each group.
func linkFrames(dev string) (rx, tx uint64, err error) {
	b, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(name) != dev {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 10 {
			break
		}
		if rx, err = strconv.ParseUint(f[1], 10, 64); err == nil {
			tx, err = strconv.ParseUint(f[9], 10, 64)
		}
		return rx, tx, err
	}
	return 0, 0, fmt.Errorf("/proc/net/dev: no %s", dev)
}

// snmpField returns one counter of /proc/net/snmp, where each protocol
// has a line of names and a line of values, both starting with proto.
func snmpField(proto, name string) (uint64, error) {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return 0, err
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != proto {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i := range names {
			if names[i] == name && i < len(f) {
				return strconv.ParseUint(f[i], 10, 64)
			}
		}
		break
	}
	return 0, fmt.Errorf("/proc/net/snmp: no %s %s", proto, name)
}

func fail(err error) {
	fmt.Println("linuxecho:", err)
	unix.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	select {}
}
