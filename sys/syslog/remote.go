package syslog

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// RFC 5424 section 6 header field limits and the NILVALUE.
const (
	nilValue      = "-"
	maxHostname   = 255 // HOSTNAME = NILVALUE / 1*255PRINTUSASCII
	maxAppName    = 48  // APP-NAME = NILVALUE / 1*48PRINTUSASCII
	maxProcID     = 128 // PROCID   = NILVALUE / 1*128PRINTUSASCII
	maxMsgID      = 32  // MSGID    = NILVALUE / 1*32PRINTUSASCII
	version5424   = "1" // VERSION, section 6.2.2
	bom           = "\xEF\xBB\xBF"
	timestamp5424 = "2006-01-02T15:04:05.999999Z07:00" // RFC 3339 with TIME-SECFRAC up to 6 digits (section 6.2.3)
)

// Message5424 is one RFC 5424 syslog message, for Append.
type Message5424 struct {
	Facility Facility
	Severity Severity
	Time     time.Time // zero: NILVALUE; written in its own zone, to the microsecond
	Hostname string    // "" = NILVALUE
	AppName  string
	ProcID   string
	MsgID    string
	// StructuredData is written as given (it must already be valid
	// SD-ELEMENTs); "" = NILVALUE.
	StructuredData string
	Msg            string // "" = no MSG
	// UTF8 marks Msg as UTF-8 text with the BOM (MSG-UTF8, section
	// 6.4); otherwise Msg is MSG-ANY.
	UTF8 bool
}

// Append appends the message in RFC 5424 section 6 syntax:
//
//	<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD [SP MSG]
//
// Header fields are cut to their maximum length and every byte outside
// printable US-ASCII (33-126) becomes '_'; an empty field is the
// NILVALUE "-".
func (m *Message5424) Append(dst []byte) []byte {
	dst = append(dst, '<')
	dst = strconv.AppendUint(dst, uint64(m.Facility)*8+uint64(m.Severity&7), 10) // PRI, section 6.2.1
	dst = append(dst, '>')
	dst = append(dst, version5424...)
	dst = append(dst, ' ')
	if m.Time.IsZero() {
		dst = append(dst, nilValue...)
	} else {
		dst = m.Time.Truncate(time.Microsecond).AppendFormat(dst, timestamp5424)
	}
	dst = append(dst, ' ')
	dst = appendHeaderField(dst, m.Hostname, maxHostname)
	dst = append(dst, ' ')
	dst = appendHeaderField(dst, m.AppName, maxAppName)
	dst = append(dst, ' ')
	dst = appendHeaderField(dst, m.ProcID, maxProcID)
	dst = append(dst, ' ')
	dst = appendHeaderField(dst, m.MsgID, maxMsgID)
	dst = append(dst, ' ')
	if m.StructuredData == "" {
		dst = append(dst, nilValue...)
	} else {
		dst = append(dst, m.StructuredData...)
	}
	if m.Msg != "" {
		dst = append(dst, ' ')
		if m.UTF8 {
			dst = append(dst, bom...)
		}
		dst = append(dst, m.Msg...)
	}
	return dst
}

// appendHeaderField appends a PRINTUSASCII header field of at most max
// bytes, or the NILVALUE when it is empty.
func appendHeaderField(dst []byte, s string, max int) []byte {
	if s == "" {
		return append(dst, nilValue...)
	}
	if len(s) > max {
		s = s[:max]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 33 || c > 126 {
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

// Format5424 appends rec as an RFC 5424 message from hostname: PRI from
// its facility and severity, its time in UTC to the microsecond, APP-NAME
// its service, no PROCID, MSGID or structured data. A message that is
// valid UTF-8 and not plain ASCII is sent as MSG-UTF8 (with the BOM, as
// section 6.4 requires); ASCII and invalid UTF-8 as MSG-ANY.
func Format5424(dst []byte, rec Record, hostname string) []byte {
	m := Message5424{
		Facility: rec.Facility,
		Severity: rec.Severity,
		Time:     rec.Time.UTC(),
		Hostname: hostname,
		AppName:  rec.Service,
		Msg:      rec.Msg,
		UTF8:     !isASCII(rec.Msg) && utf8.ValidString(rec.Msg),
	}
	if rec.Time.IsZero() {
		m.Time = time.Time{}
	}
	return m.Append(dst)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// RemoteQueue is how many records a Remote holds while the sender is
// busy; more are counted lost.
const RemoteQueue = 64

// Remote forwards the ring's records as RFC 5424 messages, one per
// datagram (RFC 5426 syslog over UDP), through send.
type Remote struct {
	ring     *Ring
	send     func([]byte) error
	hostname string
	sent     atomic.Uint64
	lost     atomic.Uint64
}

// NewRemote returns a forwarder of r's records; send is usually the
// Write of a UDP socket connected to the collector (port 514).
func NewRemote(r *Ring, send func([]byte) error, hostname string) *Remote {
	return &Remote{ring: r, send: send, hostname: hostname}
}

// Run forwards every record added after it starts until ctx is done
// (then it returns nil). Records wait in a queue of RemoteQueue; a record
// that finds the queue full, that the ring overwrote before Run read it,
// or whose send fails is counted lost. Add never waits for Run.
func (m *Remote) Run(ctx context.Context) error {
	start := m.ring.lastSeq()
	queue := make(chan Record, RemoteQueue)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 0, 512)
		for rec := range queue {
			buf = Format5424(buf[:0], rec, m.hostname)
			if err := m.send(buf); err != nil {
				m.lost.Add(1)
			} else {
				m.sent.Add(1)
			}
		}
	}()

	next := start + 1
	f := All()
	f.After = start
	m.ring.Follow(ctx, f, func(rec Record) error {
		if rec.Seq > next { // overwritten before Follow got to them
			m.lost.Add(rec.Seq - next)
		}
		next = rec.Seq + 1
		select {
		case queue <- rec:
		default:
			m.lost.Add(1)
		}
		return nil
	})
	close(queue)
	<-done
	return nil
}

// Stats returns how many messages were sent and how many lost.
func (m *Remote) Stats() (sent, lost uint64) {
	return m.sent.Load(), m.lost.Load()
}
