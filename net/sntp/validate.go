package sntp

import (
	"errors"
	"fmt"
	"time"
)

// Limits on a server's answer.
const (
	// maxStratum: 16 means unsynchronised, above is reserved (RFC 5905
	// §7.3, "Stratum").
	maxStratum = 15
	// maxDist is the largest root distance (root delay / 2 + root
	// dispersion) a usable server may claim: RFC 5905 Appendix A.1.1
	// MAXDIST, 1 s ("distance threshold").
	maxDist = time.Second
	// maxDisp bounds root delay and dispersion each: RFC 5905 Appendix
	// A.1.1 MAXDISP, 16 s. A short-format value above it is garbage (an
	// RFC 5905 root delay is never negative, so a set top bit is too).
	maxDisp = 16 * time.Second
)

// Errors of Validate. A KissError is returned for a kiss-o'-death.
var (
	ErrNotServer = errors.New("sntp: reply is not in server mode")
	ErrVersion   = errors.New("sntp: reply has an unsupported version")
	ErrStratum   = errors.New("sntp: reply has stratum 16 or higher (unsynchronised)")
	ErrLeap      = errors.New("sntp: server is unsynchronised (leap indicator 3)")
	ErrZeroTime  = errors.New("sntp: reply has a zero transmit or receive timestamp")
	ErrSpoofed   = errors.New("sntp: reply does not echo our transmit timestamp")
	ErrRootDist  = errors.New("sntp: server's root delay/dispersion is too large")
	ErrTimeOrder = errors.New("sntp: server transmitted before it received")
)

// KissError is a kiss-o'-death: a stratum 0 reply whose reference ID is
// an ASCII code telling the client what to do (RFC 5905 §7.4, RFC 4330 §8).
type KissError struct {
	Code string // e.g. "RATE", "DENY", "RSTR"
}

func (e *KissError) Error() string { return fmt.Sprintf("sntp: kiss-o'-death %q", e.Code) }

// Stop reports whether the code tells the client to stop using the
// server: DENY and RSTR (RFC 5905 §7.4: "the client MUST demobilize any
// associations to that server and stop sending packets to that server").
func (e *KissError) Stop() bool { return e.Code == "DENY" || e.Code == "RSTR" }

// RateLimit reports whether the code asks the client to poll less often
// (RATE: "the client MUST immediately reduce its polling interval").
func (e *KissError) RateLimit() bool { return e.Code == "RATE" }

// Validate checks a reply p to the request whose transmit timestamp was
// sent (RFC 4330 §5, RFC 5905 §8 and §7.4). The originate check comes
// first: a reply that does not echo sent is not an answer to us, not even a
// kiss-o'-death (an off-path attacker could otherwise silence a server).
func Validate(p *Packet, sent Timestamp) error {
	if p.Mode != ModeServer {
		return ErrNotServer
	}
	if p.Version < 3 || p.Version > 4 {
		return fmt.Errorf("%w %d", ErrVersion, p.Version)
	}
	if p.Originate != sent {
		return ErrSpoofed
	}
	if p.Stratum == 0 {
		return &KissError{Code: kissCode(p.RefID)}
	}
	if p.Stratum > maxStratum {
		return ErrStratum
	}
	if p.Leap == LeapNotSync {
		return ErrLeap
	}
	if p.Transmit == 0 || p.Receive == 0 {
		return ErrZeroTime
	}
	rd, rdisp := shortDuration(p.RootDelay), shortDuration(p.RootDispersion)
	if rd >= maxDisp || rdisp >= maxDisp || rd/2+rdisp >= maxDist {
		return ErrRootDist
	}
	if p.Transmit.Time().Before(p.Receive.Time()) {
		return ErrTimeOrder
	}
	return nil
}

// kissCode returns the reference ID as text, printable ASCII only.
func kissCode(id [4]byte) string {
	n := 0
	for n < 4 && id[n] >= 0x20 && id[n] < 0x7f {
		n++
	}
	return string(id[:n])
}

// Sample is the outcome of one exchange: the four timestamps of RFC 5905
// §8 (T1 client transmit, T2 server receive, T3 server transmit, T4
// client receive), the clock offset and the round-trip delay.
type Sample struct {
	T1, T2, T3, T4 time.Time
	Offset         time.Duration // add to the local clock to get the server's
	Delay          time.Duration // network round trip, server time excluded
	Stratum        uint8
	RootDelay      time.Duration
	RootDispersion time.Duration
}

// Compute fills in offset and delay from the timestamps (RFC 5905 §8:
// offset = ((T2 - T1) + (T3 - T4)) / 2, delay = (T4 - T1) - (T3 - T2);
// RFC 4330 §5 gives the same). T4 - T1 uses the local monotonic clock
// when both carry a monotonic reading, so a clock step during the
// exchange cannot distort the delay.
func (s *Sample) Compute() {
	// Halve before adding: each difference may saturate at ±292 years.
	s.Offset = s.T2.Sub(s.T1)/2 + s.T3.Sub(s.T4)/2
	s.Delay = max(0, s.T4.Sub(s.T1)-s.T3.Sub(s.T2))
}
