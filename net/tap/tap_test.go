//go:build linux && !mips && !mipsle

package tap_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/netns"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nictest"
	"github.com/gowrt/gowrt/net/tap"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
)

// TestLinuxPeer puts a Linux host (a network namespace) on one side of a
// TAP device and a gVisor stack, attached through netstack.Endpoint, on the
// other: Linux pings the stack, the stack pings Linux, and curl fetches
// 1 MiB over TCP from an HTTP server on the stack, checksum compared.
func TestLinuxPeer(t *testing.T) {
	ns := netns.New(t)
	dev, err := tap.Open("")
	if err != nil {
		t.Fatal(err)
	}
	nic := tap.NewNIC(dev, gnet.MAC{0x02, 0x67, 0x77, 0x72, 0x74, 0x01})
	s, _ := nictest.NewStack(t, nic, tcpip.AddrFrom4([4]byte{10, 77, 0, 1}))
	t.Cleanup(nic.Stop)
	ns.Adopt(t, dev.Name(), "10.77.0.2/24")

	if out, err := ns.Exec(20*time.Second, "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.77.0.1"); err != nil {
		t.Fatalf("Linux could not ping the gowrt stack: %v\n%s", err, out)
	}
	if err := nictest.Ping(s, tcpip.AddrFrom4([4]byte{10, 77, 0, 2}), []byte("gowrt"), 5*time.Second); err != nil {
		t.Fatalf("the gowrt stack could not ping Linux: %v", err)
	}

	body := bytes.Repeat([]byte("gowrt over tap "), 1<<16) // ~1 MiB
	sum := fmt.Sprintf("%x", sha256.Sum256(body))
	ln, err := gonet.ListenTCP(s, tcpip.FullAddress{NIC: 1, Addr: tcpip.AddrFrom4([4]byte{10, 77, 0, 1}), Port: 8080}, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	out, err := ns.Exec(60*time.Second, "sh", "-c", "curl -sS --max-time 50 http://10.77.0.1:8080/ | sha256sum")
	if err != nil || !strings.HasPrefix(out, sum) {
		t.Fatalf("curl over TCP: %v\ngot  %s\nwant %s", err, out, sum)
	}
	if nic.RxFrames.Load() == 0 || nic.TxFrames.Load() == 0 {
		t.Fatal("no frames counted")
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := tap.Open(strings.Repeat("x", 16)); err == nil {
		t.Fatal("16-byte interface name accepted")
	}
	netns.RequireRoot(t)
	d, err := tap.Open("")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Name(), "tap") {
		t.Errorf("kernel-chosen name %q", d.Name())
	}
	if err := d.Up(); err != nil {
		t.Fatal(err)
	}
	_ = d.Close()
	if _, err := d.Read(make([]byte, 64)); err == nil || errors.Is(err, tap.ErrPermission) {
		t.Fatalf("read after close: %v", err)
	}
}
