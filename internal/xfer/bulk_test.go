package xfer

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// TestBulkRoundTrip runs the bulk services on loopback: counts match in
// both directions, a request over MaxSource is refused, and a discard
// service that answers a wrong count is caught.
func TestBulkRoundTrip(t *testing.T) {
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln
	}
	logf := func(f string, a ...any) { t.Logf(f, a...) }
	dis, fil := listen(), listen()
	go ServeDiscard(dis, logf)
	go ServeFill(fil, logf)
	const n = 3<<20 + 17 // not a whole number of blocks
	up, err := BulkUpload(dis.Addr().String(), n, 10*time.Second)
	if err != nil || up.Bytes != n {
		t.Fatalf("upload: %+v, %v", up, err)
	}
	down, err := BulkDownload(fil.Addr().String(), n, 10*time.Second)
	if err != nil || down.Bytes != n {
		t.Fatalf("download: %+v, %v", down, err)
	}
	if _, err := BulkDownload(fil.Addr().String(), MaxSource+1, 10*time.Second); err == nil {
		t.Fatal("fill sent more than MaxSource")
	}

	bad := listen()
	go func() {
		c, err := bad.Accept()
		if err != nil {
			return
		}
		k, _ := discard(c)
		var res [8]byte
		binary.BigEndian.PutUint64(res[:], uint64(k-1))
		c.Write(res[:])
		c.Close()
	}()
	if _, err := BulkUpload(bad.Addr().String(), 1<<20, 10*time.Second); !errors.Is(err, errCount) {
		t.Fatalf("wrong count: got %v, want errCount", err)
	}
}
