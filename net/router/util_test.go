package router_test

import (
	"net/netip"
	"strings"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/httpd"
	"github.com/gowrt/gowrt/net/router"
)

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func startRouter(t testing.TB, cfg router.Config) *router.Router {
	t.Helper()
	r, err := router.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// nullNIC is a NIC with no traffic, for configuration tests.
type nullNIC struct{}

func (*nullNIC) MACAddress() gnet.MAC            { return gnet.MAC{2, 0, 0, 0, 0, 1} }
func (*nullNIC) MTU() int                        { return gnet.DefaultMTU }
func (*nullNIC) Capabilities() gnet.Capabilities { return 0 }
func (*nullNIC) Link() gnet.LinkState            { return gnet.LinkState{} }
func (*nullNIC) Start(gnet.Handler) error        { return nil }
func (*nullNIC) Transmit(gnet.TxBuf) error       { return gnet.ErrLinkDown }
func (*nullNIC) Stop()                           {}

// recorder is an httpd.ResponseWriter keeping the answer, to call the
// status page's handler directly.
type recorder struct {
	h    httpd.Header
	code int
	body strings.Builder
}

func (r *recorder) Header() *httpd.Header       { return &r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

func (r *recorder) WriteHeader(c int) {
	if r.code == 0 {
		r.code = c
	}
}

// serveStatus calls the router's status handler for method and path.
func serveStatus(r *router.Router, method, path string) *recorder {
	rec := &recorder{}
	r.ServeHTTPD(rec, &httpd.Request{Method: method, Target: path, Path: path, Proto: "HTTP/1.1"})
	if rec.code == 0 {
		rec.code = httpd.StatusOK
	}
	return rec
}

// vlanNIC is a host's NIC on an 802.1Q trunk: it tags every frame it sends
// with vid and accepts only frames tagged with vid, untagging them.
type vlanNIC struct {
	gnet.NIC
	vid uint16
}

func (n *vlanNIC) Capabilities() gnet.Capabilities { return 0 }

func (n *vlanNIC) Start(h gnet.Handler) error { return n.NIC.Start(&untagger{h: h, vid: n.vid}) }

func (n *vlanNIC) Transmit(b gnet.TxBuf) error {
	f := make([]byte, 0, b.Len()+gnet.VLANTagLen)
	for _, s := range b.Segments() {
		f = append(f, s...)
	}
	tagged := append(append(append([]byte{}, f[:12]...), 0x81, 0x00, byte(n.vid>>8), byte(n.vid)), f[12:]...)
	if err := n.NIC.Transmit(flat(tagged)); err != nil {
		return err
	}
	b.Release()
	return nil
}

type flat []byte

func (f flat) Segments() [][]byte { return [][]byte{f} }
func (f flat) Len() int           { return len(f) }
func (f flat) Release()           {}

type untagger struct {
	h   gnet.Handler
	vid uint16
	buf [gnet.RxBufSize]byte
}

func (u *untagger) LinkChanged(ls gnet.LinkState) { u.h.LinkChanged(ls) }

func (u *untagger) Receive(f []byte) {
	if len(f) < 18 || f[12] != 0x81 || f[13] != 0x00 || (uint16(f[14])<<8|uint16(f[15]))&0xfff != u.vid {
		return
	}
	n := copy(u.buf[:], f[:12])
	n += copy(u.buf[n:], f[16:])
	u.h.Receive(u.buf[:n])
}
