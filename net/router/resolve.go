package router

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/gowrt/gowrt/net/dns/dnsfwd"
)

const (
	// resolveTimeout bounds one lookup when ctx allows longer.
	resolveTimeout = 5 * time.Second
	// maxUDPMessage is the most a DNS server sends over UDP to a client
	// that offers no EDNS buffer size (RFC 1035 §4.2.1); the query
	// carries no OPT RR, so a longer answer comes truncated, with TC.
	maxUDPMessage = 512
)

// Reasons lookupA fails, for errors.Is.
var (
	errAnswerID       = errors.New("answer ID does not match the query")
	errNotAnswer      = errors.New("reply is not an answer to a standard query")
	errAnswerQuestion = errors.New("answer does not echo the question")
	errTruncated      = errors.New("answer truncated (TC set): more than 512 bytes for an A query")
	errRcode          = errors.New("server answered")
	errNoIPv4         = errors.New("no IPv4 address")
)

// lookupA asks the DNS server at the other end of conn (a connected UDP
// socket) for host's A records, with recursion desired, as a stub
// resolver would. It waits at most resolveTimeout, less if ctx says so.
// The answer must carry the query's ID and echo its question; any
// other answer, a non-zero RCODE, a truncated answer or one without an
// A record is an error.
func lookupA(ctx context.Context, conn net.Conn, host string) ([]netip.Addr, error) {
	addrs, err := exchangeA(ctx, conn, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	return addrs, nil
}

func exchangeA(ctx context.Context, conn net.Conn, host string) ([]netip.Addr, error) {
	q, err := questionA(host)
	if err != nil {
		return nil, err
	}
	// The ID only pairs the answer with this query on a socket nobody
	// else writes to; math/rand/v2's generator is seeded from the OS.
	id := uint16(rand.Uint32())
	b := dnsmessage.NewBuilder(make([]byte, 0, maxUDPMessage), dnsmessage.Header{ID: id, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	msg, err := b.Finish()
	if err != nil {
		return nil, err
	}

	deadline := time.Now().Add(resolveTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	// A cancelled ctx ends the wait at once: a deadline in the past
	// fails the pending read. If that has begun, it is waited for, so
	// it cannot land on the conn's next use.
	cancelled := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		conn.SetDeadline(time.Unix(1, 0))
		close(cancelled)
	})
	defer func() {
		if !stop() {
			<-cancelled
		}
	}()

	if _, err := conn.Write(msg); err != nil {
		return nil, err
	}
	// One byte more than a UDP answer may hold shows an oversized one.
	buf := make([]byte, maxUDPMessage+1)
	n, err := conn.Read(buf)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return parseAAnswer(buf[:n], id, q)
}

// questionA is the question for host's A records, host taken as fully
// qualified whether or not it ends in a dot.
func questionA(host string) (dnsmessage.Question, error) {
	if host == "" || host == "." {
		return dnsmessage.Question{}, errors.New("empty host name")
	}
	if host[len(host)-1] != '.' {
		host += "."
	}
	name, err := dnsmessage.NewName(host)
	if err != nil {
		return dnsmessage.Question{}, err
	}
	return dnsmessage.Question{Name: name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}, nil
}

// parseAAnswer reads the answer to query id for question q and returns
// the A records of its answer section (the CNAMEs leading to them are
// skipped: the forwarder passes on the upstream's whole chain). It never
// panics, whatever msg holds.
func parseAAnswer(msg []byte, id uint16, q dnsmessage.Question) ([]netip.Addr, error) {
	if len(msg) > maxUDPMessage {
		return nil, fmt.Errorf("answer of %d bytes, over the %d a UDP answer may hold", len(msg), maxUDPMessage)
	}
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil, fmt.Errorf("malformed answer: %w", err)
	}
	if h.ID != id {
		return nil, fmt.Errorf("%w (sent %#04x, got %#04x)", errAnswerID, id, h.ID)
	}
	if !h.Response || h.OpCode != 0 { // OpCode 0: QUERY, RFC 1035 §4.1.1
		return nil, errNotAnswer
	}
	qs, err := p.AllQuestions()
	if err != nil {
		return nil, fmt.Errorf("malformed answer: %w", err)
	}
	if len(qs) != 1 || qs[0].Type != q.Type || qs[0].Class != q.Class || !sameName(qs[0].Name, q.Name) {
		return nil, errAnswerQuestion
	}
	if h.Truncated {
		return nil, errTruncated
	}
	var out []netip.Addr
	for {
		rh, err := p.AnswerHeader()
		if err == dnsmessage.ErrSectionDone {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("malformed answer: %w", err)
		}
		if rh.Type != dnsmessage.TypeA || rh.Class != dnsmessage.ClassINET {
			if err := p.SkipAnswer(); err != nil {
				return nil, fmt.Errorf("malformed answer: %w", err)
			}
			continue
		}
		// dnsmessage reads an A record's four bytes without looking at
		// RDLENGTH, so a shorter record would take its address from
		// the bytes after it.
		if rh.Length != 4 { // RFC 1035 §3.4.1: a 32-bit address
			return nil, fmt.Errorf("malformed answer: A record of %d bytes", rh.Length)
		}
		a, err := p.AResource()
		if err != nil {
			return nil, fmt.Errorf("malformed answer: %w", err)
		}
		out = append(out, netip.AddrFrom4(a.A))
	}
	// The RCODE's upper bits are in an OPT RR, if the server sent one
	// (RFC 6891 §6.1.3), although the query offered no EDNS.
	rcode := h.RCode
	if err := p.SkipAllAuthorities(); err != nil {
		return nil, fmt.Errorf("malformed answer: %w", err)
	}
	for {
		rh, err := p.AdditionalHeader()
		if err == dnsmessage.ErrSectionDone {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("malformed answer: %w", err)
		}
		if rh.Type == dnsmessage.TypeOPT {
			rcode = rh.ExtendedRCode(h.RCode)
		}
		if err := p.SkipAdditional(); err != nil {
			return nil, fmt.Errorf("malformed answer: %w", err)
		}
	}
	if rcode != dnsmessage.RCodeSuccess {
		return nil, fmt.Errorf("%w %s", errRcode, rcodeName(rcode))
	}
	if len(out) == 0 {
		return nil, errNoIPv4
	}
	return out, nil
}

// sameName compares two names as DNS does (RFC 4343 §3).
func sameName(a, b dnsmessage.Name) bool {
	return a.Length == b.Length && dnsfwd.NameEqualFold(a.Data[:a.Length], b.Data[:b.Length])
}

// rcodeName is the mnemonic of an RCODE in the header's four bits
// (RFC 1035 §4.1.1; RFC 2136 §2.2 for YXDOMAIN through NOTZONE) or,
// extended by an OPT RR, BADVERS (RFC 6891 §9).
func rcodeName(rc dnsmessage.RCode) string {
	names := [...]string{"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
		"YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE"}
	if int(rc) < len(names) {
		return names[rc]
	}
	if rc == 16 {
		return "BADVERS"
	}
	return "RCODE " + strconv.Itoa(int(rc))
}
