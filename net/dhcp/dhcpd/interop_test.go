//go:build linux && !mips && !mipsle

package dhcpd

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gowrt/gowrt/internal/netns"
)

// listenIn opens the server's UDP port 67 inside ns, bound to dev with
// SO_BINDTODEVICE and allowed to broadcast (the test's stand-in for the
// firmware's LAN PacketConn).
func listenIn(t *testing.T, ns *netns.NS, dev string) net.PacketConn {
	t.Helper()
	type result struct {
		c   net.PacketConn
		err error
	}
	rc := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			rc <- result{err: err}
			return
		}
		defer unix.Close(orig)
		target, err := unix.Open("/var/run/netns/"+ns.Name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			rc <- result{err: err}
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			rc <- result{err: err}
			return
		}
		lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BROADCAST, 1); serr != nil {
					return
				}
				if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); serr != nil {
					return
				}
				serr = unix.BindToDevice(int(fd), dev)
			})
			if err != nil {
				return err
			}
			return serr
		}}
		c, lerr := lc.ListenPacket(context.Background(), "udp4", "0.0.0.0:67")
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			rc <- result{err: err} // the thread stays locked and dies
			return
		}
		runtime.UnlockOSThread()
		rc <- result{c, lerr}
	}()
	r := <-rc
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.c
}

type dhclientRun struct {
	ns    *netns.NS
	dir   string
	iface string
	runs  int
}

// lease runs dhclient once (-1) in the client namespace with its own
// lease and pid files and a script that records the environment, waits
// for BOUND and returns the script's variables.
func (d *dhclientRun) lease(t *testing.T, conf string) map[string]string {
	t.Helper()
	d.runs++
	dir := filepath.Join(d.dir, fmt.Sprint(d.runs))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nenv > "+dir+"/env.$reason.tmp && mv "+dir+"/env.$reason.tmp "+dir+"/env.$reason\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cf := filepath.Join(dir, "dhclient.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", d.ns.Name, "/usr/sbin/dhclient", "-1", "-d", "-v",
		"-sf", script, "-lf", filepath.Join(dir, "leases"), "-pf", filepath.Join(dir, "pid"), "-cf", cf, d.iface)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "env.BOUND")); err == nil {
			env := map[string]string{}
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					env[k] = strings.Trim(v, "'")
				}
			}
			return env
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("dhclient never bound:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestInteropDhclient: ISC dhclient in a namespace gets a lease with
// OpenWrt's defaults from the server; a second MAC gets another address;
// after a restart on the same store, the first MAC gets its address back.
func TestInteropDhclient(t *testing.T) {
	srvNS, cliNS := netns.New(t), netns.New(t)
	srvNS.Must(t, "ip", "link", "add", "ls", "type", "veth", "peer", "name", "lc", "netns", cliNS.Name)
	srvNS.Must(t, "ip", "addr", "add", "192.168.1.1/24", "dev", "ls")
	srvNS.Must(t, "ip", "link", "set", "ls", "up")
	macA, macB := "02:00:5e:10:00:0a", "02:00:5e:10:00:0b"
	cliNS.Must(t, "ip", "link", "set", "lc", "address", macA)
	cliNS.Must(t, "ip", "link", "set", "lc", "up")

	store := &memStore{}
	start := func() (*Server, func()) {
		s, err := New(Config{Store: store, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		conn := listenIn(t, srvNS, "ls")
		done := make(chan error, 1)
		go func() { done <- s.Serve(conn) }()
		return s, func() {
			conn.Close()
			<-done
			if err := s.Flush(); err != nil {
				t.Error(err)
			}
		}
	}
	srv, stop := start()
	dc := &dhclientRun{ns: cliNS, dir: t.TempDir(), iface: "lc"}

	// Client A asks for .200 and names itself.
	envA := dc.lease(t, "send host-name \"alpha\";\nsend dhcp-requested-address 192.168.1.200;\n"+
		"request subnet-mask, routers, domain-name-servers, domain-name, dhcp-lease-time, dhcp-renewal-time, dhcp-rebinding-time;\n")
	if envA["new_ip_address"] != "192.168.1.200" || envA["new_subnet_mask"] != "255.255.255.0" ||
		envA["new_routers"] != "192.168.1.1" || envA["new_domain_name_servers"] != "192.168.1.1" ||
		envA["new_domain_name"] != "lan" || envA["new_dhcp_lease_time"] != "43200" ||
		envA["new_dhcp_renewal_time"] != "21600" || envA["new_dhcp_rebinding_time"] != "37800" ||
		envA["new_dhcp_server_identifier"] != "192.168.1.1" {
		t.Fatalf("client A's lease: %v", envA)
	}
	if a, ok := srv.Lookup("alpha.lan"); !ok || a != netip.MustParseAddr("192.168.1.200") {
		t.Fatalf("Lookup(alpha.lan) = %v %v; leases %+v", a, ok, srv.Leases())
	}

	// Client B (another MAC, no wishes) gets another address in the pool.
	cliNS.Must(t, "ip", "link", "set", "lc", "address", macB)
	envB := dc.lease(t, "")
	b, err := netip.ParseAddr(envB["new_ip_address"])
	if err != nil || b == netip.MustParseAddr("192.168.1.200") || b.Less(netip.MustParseAddr("192.168.1.100")) || netip.MustParseAddr("192.168.1.249").Less(b) {
		t.Fatalf("client B got %q", envB["new_ip_address"])
	}
	if ls := srv.Leases(); len(ls) != 2 || ls[0].MAC.String() != macB && ls[1].MAC.String() != macB {
		t.Fatalf("leases %+v", ls)
	}

	// Restart the server on the same store; client A, with a fresh lease
	// file and no requested address, gets .200 back from the stored table.
	stop()
	srv, stop = start()
	defer stop()
	if srv.LoadError() != nil || len(srv.Leases()) != 2 {
		t.Fatalf("after restart: %v, %+v", srv.LoadError(), srv.Leases())
	}
	cliNS.Must(t, "ip", "link", "set", "lc", "address", macA)
	envA2 := dc.lease(t, "")
	if envA2["new_ip_address"] != "192.168.1.200" {
		t.Fatalf("after restart client A got %q, had 192.168.1.200", envA2["new_ip_address"])
	}
}
