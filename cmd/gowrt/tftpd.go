package main

// A read-only TFTP server for one file: what a router's boot loader
// fetches the firmware with (U-Boot's tftpboot, RedBoot's load -m tftp).
// No TFTP library is among the project's vetted Go modules, and the
// protocol subset a firmware download needs is small: RFC 1350 read
// requests in octet mode, with the option extension (RFC 2347) for the
// options U-Boot and curl ask for, blksize (RFC 2348) and tsize and
// timeout (RFC 2349). Write requests, other file names and netascii are
// answered with TFTP errors.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Opcodes (RFC 1350 §5, RFC 2347).
const (
	opRRQ   = 1
	opWRQ   = 2
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6
)

// Error codes (RFC 1350 appendix; 8 from RFC 2347).
const (
	errUndefined     = 0
	errFileNotFound  = 1
	errAccess        = 2
	errIllegalOp     = 4
	errUnknownTID    = 5
	errOptionRefused = 8
)

// Protocol limits.
const (
	maxRequest       = 512   // a request packet's largest size (RFC 2347 "Packet Format")
	defaultBlockSize = 512   // RFC 1350
	minBlockSize     = 8     // RFC 2348
	maxBlockSize     = 65464 // RFC 2348
	minTimeout       = 1     // seconds, RFC 2349
	maxTimeout       = 255
	maxRetries       = 5
)

// tftpRequest is a parsed RRQ or WRQ.
type tftpRequest struct {
	op       uint16
	filename string
	mode     string            // lower case
	options  map[string]string // lower-case names, as sent, first occurrence wins
	order    []string          // option names in the order sent
}

var errMalformed = errors.New("tftp: malformed request")

// parseRequest parses a read or write request packet (RFC 1350 §5,
// RFC 2347): opcode, filename NUL, mode NUL, then option NUL value NUL
// pairs.
func parseRequest(p []byte) (tftpRequest, error) {
	if len(p) < 2 {
		return tftpRequest{}, fmt.Errorf("%w: %d bytes", errMalformed, len(p))
	}
	if len(p) > maxRequest {
		return tftpRequest{}, fmt.Errorf("%w: %d bytes, more than %d", errMalformed, len(p), maxRequest)
	}
	r := tftpRequest{op: binary.BigEndian.Uint16(p)}
	if r.op != opRRQ && r.op != opWRQ {
		return r, fmt.Errorf("%w: opcode %d is not a request", errMalformed, r.op)
	}
	fields := bytes.Split(p[2:], []byte{0})
	// A well-formed request ends with NUL, so the last field is empty.
	if len(fields) < 3 || len(fields[len(fields)-1]) != 0 {
		return r, fmt.Errorf("%w: fields not NUL-terminated", errMalformed)
	}
	fields = fields[:len(fields)-1]
	if len(fields)%2 != 0 {
		return r, fmt.Errorf("%w: option without a value", errMalformed)
	}
	r.filename = string(fields[0])
	r.mode = strings.ToLower(string(fields[1]))
	if r.filename == "" || r.mode == "" {
		return r, fmt.Errorf("%w: empty filename or mode", errMalformed)
	}
	for i := 2; i < len(fields); i += 2 {
		name := strings.ToLower(string(fields[i]))
		if name == "" {
			return r, fmt.Errorf("%w: empty option name", errMalformed)
		}
		if r.options == nil {
			r.options = map[string]string{}
		}
		if _, dup := r.options[name]; dup {
			continue
		}
		r.options[name] = string(fields[i+1])
		r.order = append(r.order, name)
	}
	return r, nil
}

// tftpServer serves one file read-only.
type tftpServer struct {
	name string // the file name clients ask for (the base name)
	data []byte
	log  io.Writer
	// timeout is the retransmission timeout when the client sets none.
	timeout time.Duration

	wg sync.WaitGroup
}

// errorPacket returns a TFTP ERROR packet.
func errorPacket(code uint16, msg string) []byte {
	p := make([]byte, 4, 5+len(msg))
	binary.BigEndian.PutUint16(p, opERROR)
	binary.BigEndian.PutUint16(p[2:], code)
	p = append(p, msg...)
	return append(p, 0)
}

// serve answers requests on conn until ctx ends, then waits for the
// transfers in progress.
func (s *tftpServer) serve(ctx context.Context, conn net.PacketConn) error {
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	buf := make([]byte, maxRequest+1)
	for {
		n, addr, err := conn.ReadFrom(buf)
		if err != nil {
			s.wg.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		req, perr := parseRequest(buf[:n])
		ua, ok := addr.(*net.UDPAddr)
		if !ok {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(ctx, conn.LocalAddr(), ua, req, perr)
		}()
	}
}

// handle answers one request from a transfer socket of its own (the
// server's transfer ID, RFC 1350 §4).
func (s *tftpServer) handle(ctx context.Context, local net.Addr, peer *net.UDPAddr, req tftpRequest, perr error) {
	la, _ := local.(*net.UDPAddr)
	var ip net.IP
	if la != nil && !la.IP.IsUnspecified() {
		ip = la.IP
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
	if err != nil {
		fmt.Fprintf(s.log, "gowrt: tftp: %v\n", err)
		return
	}
	defer c.Close()
	refuse := func(code uint16, msg string) {
		c.WriteToUDP(errorPacket(code, msg), peer)
		fmt.Fprintf(s.log, "gowrt: tftp: %v: refused: %s\n", peer, msg)
	}
	switch {
	case perr != nil:
		refuse(errIllegalOp, perr.Error())
		return
	case req.op == opWRQ:
		refuse(errAccess, "gowrt tftp serves one file read-only: write requests are refused")
		return
	case strings.TrimPrefix(req.filename, "/") != s.name:
		refuse(errFileNotFound, fmt.Sprintf("file not found: %q (this server has only %q)", req.filename, s.name))
		return
	case req.mode != "octet":
		refuse(errUndefined, fmt.Sprintf("mode %q: only octet (binary) transfers of a firmware image", req.mode))
		return
	}
	start := time.Now()
	if err := s.send(ctx, c, peer, req); err != nil {
		fmt.Fprintf(s.log, "gowrt: tftp: %v: %s: %v\n", peer, s.name, err)
		return
	}
	d := time.Since(start)
	fmt.Fprintf(s.log, "gowrt: tftp: sent %s to %v: %d bytes in %.1fs (%.0f KiB/s)\n",
		s.name, peer, len(s.data), d.Seconds(), float64(len(s.data))/1024/max(d.Seconds(), 1e-3))
}

// negotiate answers the request's options (RFC 2347): the block size, the
// timeout and the transfer size, each acknowledged in the OACK; unknown or
// unusable options are left out, which refuses them.
func (s *tftpServer) negotiate(req tftpRequest) (oack []byte, blk int, timeout time.Duration) {
	blk, timeout = defaultBlockSize, s.timeout
	var b []byte
	add := func(name, val string) {
		b = append(b, name...)
		b = append(b, 0)
		b = append(b, val...)
		b = append(b, 0)
	}
	for _, name := range req.order {
		val := req.options[name]
		switch name {
		case "blksize":
			n, err := strconv.Atoi(val)
			if err != nil || n < minBlockSize {
				continue
			}
			blk = min(n, maxBlockSize)
			add(name, strconv.Itoa(blk))
		case "timeout":
			n, err := strconv.Atoi(val)
			if err != nil || n < minTimeout || n > maxTimeout {
				continue
			}
			timeout = time.Duration(n) * time.Second
			add(name, val)
		case "tsize":
			add(name, strconv.Itoa(len(s.data)))
		}
	}
	if len(b) == 0 {
		return nil, blk, timeout
	}
	p := make([]byte, 2, 2+len(b))
	binary.BigEndian.PutUint16(p, opOACK)
	return append(p, b...), blk, timeout
}

// send transfers the file: an OACK if options were accepted (answered by
// ACK 0), then DATA blocks, each retransmitted until acknowledged
// (lock-step, RFC 1350 §2). Duplicate ACKs are not answered with another
// send (RFC 1123 4.2.3.1, the Sorcerer's Apprentice fix); packets from
// other transfer IDs get an error and are otherwise ignored.
func (s *tftpServer) send(ctx context.Context, c *net.UDPConn, peer *net.UDPAddr, req tftpRequest) error {
	oack, blk, timeout := s.negotiate(req)
	pkt := make([]byte, 4+blk)
	in := make([]byte, 4+maxBlockSize)
	// exchange sends out until the peer acknowledges block.
	exchange := func(out []byte, block uint16) error {
		for try := 0; try <= maxRetries; try++ {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if _, err := c.WriteToUDP(out, peer); err != nil {
				return err
			}
			deadline := time.Now().Add(timeout)
			for {
				c.SetReadDeadline(deadline)
				n, from, err := c.ReadFromUDP(in)
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					break // retransmit
				}
				if err != nil {
					return err
				}
				if from.Port != peer.Port || !from.IP.Equal(peer.IP) {
					c.WriteToUDP(errorPacket(errUnknownTID, "unknown transfer ID"), from)
					continue
				}
				if n < 4 {
					continue
				}
				switch binary.BigEndian.Uint16(in) {
				case opACK:
					if binary.BigEndian.Uint16(in[2:]) == block {
						return nil
					}
					// An old block's ACK: keep waiting.
				case opERROR:
					msg := in[4:n]
					if i := bytes.IndexByte(msg, 0); i >= 0 {
						msg = msg[:i]
					}
					return fmt.Errorf("client aborted: error %d %q", binary.BigEndian.Uint16(in[2:]), msg)
				default:
					c.WriteToUDP(errorPacket(errIllegalOp, "expected an ACK"), peer)
					return fmt.Errorf("client sent opcode %d during the transfer", binary.BigEndian.Uint16(in))
				}
			}
		}
		return fmt.Errorf("no ACK for block %d after %d tries", block, maxRetries+1)
	}
	if oack != nil {
		if err := exchange(oack, 0); err != nil {
			return err
		}
	}
	// Blocks 1..n; the last is shorter than blk, possibly empty. Block
	// numbers wrap to 0 after 65535, as U-Boot and curl expect.
	for i, off := 1, 0; ; i++ {
		n := min(blk, len(s.data)-off)
		binary.BigEndian.PutUint16(pkt, opDATA)
		binary.BigEndian.PutUint16(pkt[2:], uint16(i))
		copy(pkt[4:], s.data[off:off+n])
		if err := exchange(pkt[:4+n], uint16(i)); err != nil {
			return err
		}
		off += n
		if n < blk {
			return nil
		}
	}
}
