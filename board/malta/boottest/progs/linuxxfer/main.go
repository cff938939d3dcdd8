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
	"os"
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

func fail(err error) {
	fmt.Println("linuxecho:", err)
	unix.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	select {}
}
