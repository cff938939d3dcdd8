package xfer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// The bulk services measure the way iperf3 does: the sender repeats one
// block of bytes, the receiver counts and discards them, so a transfer
// costs the network path and little else (the sink and source above hash
// and generate every byte, which on a slow CPU is most of the work).
const (
	DiscardPort = 5201 // counts what it is sent until the half-close, answers the count (8 bytes)
	FillPort    = 5202 // sends as many bytes as asked (an 8-byte big-endian count)
)

// BulkBlock is the size of the writes and reads: iperf3's default TCP
// block (DEFAULT_TCP_BLKSIZE, 128 KiB, in its iperf_api.h).
const BulkBlock = 128 << 10

// bulkBlock returns the block the fill service and BulkUpload repeat,
// made on first use: generating it at package init cost every program
// that links xfer (the router boot tests' firmware) 3 M instructions of
// boot.
var bulkBlock = sync.OnceValue(func() []byte {
	b := make([]byte, BulkBlock)
	r := rand.NewChaCha8(seed)
	_, _ = r.Read(b)
	return b
})

// ServeDiscard answers each connection on ln with the number of bytes it
// received until the client's half-close. It returns when ln fails.
func ServeDiscard(ln net.Listener, logf func(string, ...any)) error {
	return serve(ln, func(c net.Conn) error {
		n, err := discard(c)
		if err != nil {
			return fmt.Errorf("discard: after %d bytes: %w", n, err)
		}
		var res [8]byte
		binary.BigEndian.PutUint64(res[:], uint64(n))
		_, err = c.Write(res[:])
		logf("xfer: discard took %d bytes", n)
		return err
	}, logf)
}

// ServeFill sends each client the number of bytes it asks for (an 8-byte
// big-endian count, at most MaxSource), repeating one block, then closes.
func ServeFill(ln net.Listener, logf func(string, ...any)) error {
	return serve(ln, func(c net.Conn) error {
		var req [8]byte
		if _, err := io.ReadFull(c, req[:]); err != nil {
			return fmt.Errorf("fill: request: %w", err)
		}
		n := binary.BigEndian.Uint64(req[:])
		if n > MaxSource {
			return fmt.Errorf("fill: %d bytes asked, at most %d", n, MaxSource)
		}
		sent, err := fill(c, int64(n))
		logf("xfer: fill sent %d bytes", sent)
		return err
	}, logf)
}

// discard reads r to its end in BulkBlock reads and counts the bytes.
func discard(r io.Reader) (int64, error) {
	buf := make([]byte, BulkBlock)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// fill writes n bytes of the repeated block to w.
func fill(w io.Writer, n int64) (int64, error) {
	var sent int64
	blk := bulkBlock()
	for sent < n {
		b := blk[:min(int64(len(blk)), n-sent)]
		k, err := w.Write(b)
		sent += int64(k)
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// errCount reports a bulk transfer whose byte count did not match.
var errCount = errors.New("xfer: byte count mismatch")

// BulkUpload sends n bytes to the discard service at addr and checks the
// count it answers with.
func BulkUpload(addr string, n int64, timeout time.Duration) (Result, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	start := time.Now()
	if _, err := fill(c, n); err != nil {
		return Result{}, fmt.Errorf("bulk upload: %w", err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return Result{}, err
	}
	var res [8]byte
	if _, err := io.ReadFull(c, res[:]); err != nil {
		return Result{}, fmt.Errorf("bulk upload: reading the count: %w", err)
	}
	d := time.Since(start)
	if got := int64(binary.BigEndian.Uint64(res[:])); got != n {
		return Result{}, fmt.Errorf("%w: sent %d, discard service took %d", errCount, n, got)
	}
	return Result{Bytes: n, Duration: d}, nil
}

// BulkDownload asks the fill service at addr for n bytes and counts them.
func BulkDownload(addr string, n int64, timeout time.Duration) (Result, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	start := time.Now()
	var req [8]byte
	binary.BigEndian.PutUint64(req[:], uint64(n))
	if _, err := c.Write(req[:]); err != nil {
		return Result{}, err
	}
	k, err := discard(c)
	if err != nil {
		return Result{}, fmt.Errorf("bulk download: after %d bytes: %w", k, err)
	}
	d := time.Since(start)
	if k != n {
		return Result{}, fmt.Errorf("%w: asked %d, got %d", errCount, n, k)
	}
	return Result{Bytes: n, Duration: d}, nil
}
