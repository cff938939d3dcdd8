// Package xfer is the bulk-transfer service the QEMU tests and benchmarks
// run on the firmware (and, for comparison, on Linux): a sink that hashes
// what it is sent and a source that sends a reproducible stream, each
// checked with SHA-256 by the client.
//
// Upload and download run one after the other, not as an echo: a TCP echo
// whose server stops reading while its own writes are blocked closes its
// receive window with data in flight both ways, and gVisor drops the
// peer's window probes whole, ACK included, when its window is zero
// (header.Acceptable requires an empty segment at RCV.NXT; Linux also
// takes a probe carrying data at RCV.NXT and processes its ACK). The two
// sides then wait on each other for good. That is a property of gVisor's
// TCP, not of the NIC path these transfers exist to load.
package xfer

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"
)

// Ports the firmware test programs serve on.
const (
	SinkPort   = 9  // discard-like: send bytes, half-close, read their SHA-256
	SourcePort = 19 // chargen-like: send a 8-byte length, read that many bytes
)

// MaxSource bounds what a client may ask the source for.
const MaxSource = 1 << 30

var seed = [32]byte{'g', 'o', 'w', 'r', 't', ' ', 'x', 'f', 'e', 'r'}

// Stream is the reproducible byte stream the source sends.
func Stream() io.Reader { return rand.NewChaCha8(seed) }

// sinkBuffer is the sink's read size. io.Copy's 32 KiB per connection
// is most of what a held connection costs the firmware (200 held ones
// took 6.4 MiB); reads of a few segments cost a transfer no more.
const sinkBuffer = 4 << 10

// ServeSink answers each connection on ln with the SHA-256 of everything
// it received until the client's half-close. It returns when ln fails.
func ServeSink(ln net.Listener, logf func(string, ...any)) error {
	return serve(ln, func(c net.Conn) error {
		h := sha256.New()
		n, err := io.CopyBuffer(h, c, make([]byte, sinkBuffer))
		if err != nil {
			return fmt.Errorf("sink: after %d bytes: %w", n, err)
		}
		_, err = c.Write(h.Sum(nil))
		logf("xfer: sink took %d bytes", n)
		return err
	}, logf)
}

// ServeSource sends each client the number of bytes it asks for (an 8-byte
// big-endian count) from Stream, then closes.
func ServeSource(ln net.Listener, logf func(string, ...any)) error {
	return serve(ln, func(c net.Conn) error {
		var req [8]byte
		if _, err := io.ReadFull(c, req[:]); err != nil {
			return fmt.Errorf("source: request: %w", err)
		}
		n := binary.BigEndian.Uint64(req[:])
		if n > MaxSource {
			return fmt.Errorf("source: %d bytes asked, at most %d", n, MaxSource)
		}
		sent, err := io.CopyN(c, Stream(), int64(n))
		logf("xfer: source sent %d bytes", sent)
		return err
	}, logf)
}

func serve(ln net.Listener, handle func(net.Conn) error, logf func(string, ...any)) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			if err := handle(c); err != nil {
				logf("xfer: %v", err)
			}
		}()
	}
}

// Result is one checked transfer.
type Result struct {
	Bytes    int64
	Duration time.Duration
}

// Mbps is the transfer's rate in Mbit/s.
func (r Result) Mbps() float64 { return float64(r.Bytes) * 8 / r.Duration.Seconds() / 1e6 }

// ErrChecksum reports a transfer whose SHA-256 did not match.
var ErrChecksum = errors.New("xfer: SHA-256 mismatch")

// Upload sends n bytes of Stream to the sink at addr and checks the digest
// it answers with.
func Upload(addr string, n int64, timeout time.Duration) (Result, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	h := sha256.New()
	start := time.Now()
	if _, err := io.CopyN(io.MultiWriter(c, h), Stream(), n); err != nil {
		return Result{}, fmt.Errorf("upload: %w", err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return Result{}, err
	}
	var got [sha256.Size]byte
	if _, err := io.ReadFull(c, got[:]); err != nil {
		return Result{}, fmt.Errorf("upload: reading the digest: %w", err)
	}
	d := time.Since(start)
	if string(got[:]) != string(h.Sum(nil)) {
		return Result{}, ErrChecksum
	}
	return Result{Bytes: n, Duration: d}, nil
}

// Download asks the source at addr for n bytes and checks them against
// Stream.
func Download(addr string, n int64, timeout time.Duration) (Result, error) {
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
	got, want := sha256.New(), sha256.New()
	k, err := io.Copy(got, c)
	if err != nil {
		return Result{}, fmt.Errorf("download: after %d bytes: %w", k, err)
	}
	d := time.Since(start)
	if k != n {
		return Result{}, fmt.Errorf("download: %d of %d bytes", k, n)
	}
	_, _ = io.CopyN(want, Stream(), n)
	if string(got.Sum(nil)) != string(want.Sum(nil)) {
		return Result{}, ErrChecksum
	}
	return Result{Bytes: n, Duration: d}, nil
}
