package syslog

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Record is one log line.
type Record struct {
	Seq      uint64    // 1, 2, 3 ... in the order the ring took them; set by Add
	Time     time.Time // when it happened; Add fills in a zero Time with now
	Facility Facility
	Severity Severity
	Service  string // who logged it ("dhcpd", "kernel"); at most MaxService bytes
	Msg      string
}

// Sizes of the ring.
const (
	// DefaultSize is OpenWrt logd's default log_size (64 KiB).
	DefaultSize = 64 << 10
	// MinSize is the smallest ring NewRing makes: its quarter (the
	// largest record) still holds a header, a service and a short line.
	MinSize = 1 << 10
	// MaxService is the longest service name kept; longer ones are cut.
	// RFC 5424 APP-NAME allows 48, OpenWrt tags are shorter still.
	MaxService = 64
)

// TruncatedMarker ends a message that was cut because its record would
// have been longer than a quarter of the ring.
const TruncatedMarker = "...[truncated]"

// The encoding of one record in the ring, all integers big-endian so the
// layout does not depend on the CPU:
//
//	length   uint32  bytes of the whole record, header included
//	seq      uint64
//	time     int64   Unix nanoseconds (years 1678-2262)
//	pri      uint8   facility<<3 | severity (RFC 5424 PRI without the brackets)
//	svclen   uint8
//	service  svclen bytes
//	msg      the rest
//
// A record may wrap around the end of the slice; length always tells
// where the next one starts.
const (
	offLen    = 0
	offSeq    = 4
	offTime   = 12
	offPri    = 20
	offSvcLen = 21
	headerLen = 22
)

// Ring is the bounded log. All methods are safe for concurrent use.
type Ring struct {
	mu        sync.Mutex
	buf       []byte // fixed at NewRing: the ring never allocates more
	head      int    // offset of the oldest record
	used      int    // bytes held by records
	count     int    // records held
	seq       uint64 // Seq of the newest record (= records ever written)
	overwrite uint64 // records pushed out to make room
	truncated uint64 // records whose message was cut to a quarter of the ring
	// notify is closed by the next Add; made on demand by a Follow that
	// waits, so Add allocates nothing when nobody follows.
	notify chan struct{}
}

// NewRing makes a ring that holds at most size bytes of encoded records
// (size <= 0: DefaultSize; below MinSize: MinSize).
func NewRing(size int) *Ring {
	if size <= 0 {
		size = DefaultSize
	}
	size = max(size, MinSize)
	return &Ring{buf: make([]byte, size)}
}

// maxRecord is the longest encoded record: a quarter of the ring, so one
// huge line cannot flush everything else out.
func (r *Ring) maxRecord() int { return len(r.buf) / 4 }

// Add appends rec to the ring, overwriting the oldest records when it
// does not fit. Its Seq is assigned by the ring; a zero Time becomes now.
// A message that would make the record longer than a quarter of the ring
// is cut and ends in TruncatedMarker. Add allocates nothing.
func (r *Ring) Add(rec Record) {
	t := rec.Time
	if t.IsZero() {
		t = time.Now()
	}
	r.add(t, rec.Facility, rec.Severity, rec.Service, rec.Msg, nil)
}

// add encodes one record whose message is msg followed by more (so the
// slog handler can pass its rendered attributes without joining them).
func (r *Ring) add(t time.Time, fac Facility, sev Severity, service, msg string, more []byte) {
	r.mu.Lock()
	r.addLocked(t, fac, sev, service, msg, more)
	r.mu.Unlock()
}

// addLocked is add with r.mu held.
func (r *Ring) addLocked(t time.Time, fac Facility, sev Severity, service, msg string, more []byte) {
	service = cutString(service, MaxService)

	room := r.maxRecord() - headerLen - len(service)
	msgLen := len(msg) + len(more)
	cut := -1 // bytes of msg+more kept when the message is truncated
	if msgLen > room {
		cut = room - len(TruncatedMarker)
		// Back up to the start of a UTF-8 sequence so the cut
		// message stays valid text.
		for cut > 0 && !utf8.RuneStart(byteAt(msg, more, cut)) {
			cut--
		}
		msgLen = cut + len(TruncatedMarker)
		r.truncated++
	}
	n := headerLen + len(service) + msgLen
	for len(r.buf)-r.used < n {
		r.dropOldest()
	}

	r.seq++
	var h [headerLen]byte
	binary.BigEndian.PutUint32(h[offLen:], uint32(n))
	binary.BigEndian.PutUint64(h[offSeq:], r.seq)
	binary.BigEndian.PutUint64(h[offTime:], uint64(t.UnixNano()))
	h[offPri] = byte(fac&0x1f)<<3 | byte(sev&7)
	h[offSvcLen] = byte(len(service))

	pos := (r.head + r.used) % len(r.buf)
	pos = r.put(pos, h[:])
	pos = r.putString(pos, service)
	if cut < 0 {
		pos = r.putString(pos, msg)
		r.put(pos, more)
	} else {
		if cut <= len(msg) {
			pos = r.putString(pos, msg[:cut])
		} else {
			pos = r.putString(pos, msg)
			pos = r.put(pos, more[:cut-len(msg)])
		}
		r.putString(pos, TruncatedMarker)
	}
	r.used += n
	r.count++

	if r.notify != nil {
		close(r.notify)
		r.notify = nil
	}
}

// byteAt returns byte i of a+b.
func byteAt(a string, b []byte, i int) byte {
	if i < len(a) {
		return a[i]
	}
	return b[i-len(a)]
}

// cutString shortens s to at most n bytes on a UTF-8 boundary.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// dropOldest forgets the oldest record. r.mu is held.
func (r *Ring) dropOldest() {
	n := int(r.uint32At(r.head))
	r.head = (r.head + n) % len(r.buf)
	r.used -= n
	r.count--
	r.overwrite++
}

// put copies p into the ring at pos, wrapping, and returns the offset
// after it.
func (r *Ring) put(pos int, p []byte) int {
	n := copy(r.buf[pos:], p)
	if n < len(p) {
		n += copy(r.buf, p[n:])
	}
	return (pos + n) % len(r.buf)
}

// putString is put for a string (no conversion, no allocation).
func (r *Ring) putString(pos int, s string) int {
	n := copy(r.buf[pos:], s)
	if n < len(s) {
		n += copy(r.buf, s[n:])
	}
	return (pos + n) % len(r.buf)
}

// read copies len(p) bytes at pos out of the ring.
func (r *Ring) read(pos int, p []byte) {
	n := copy(p, r.buf[pos:])
	if n < len(p) {
		copy(p[n:], r.buf)
	}
}

func (r *Ring) uint32At(pos int) uint32 {
	var b [4]byte
	r.read(pos, b[:])
	return binary.BigEndian.Uint32(b[:])
}

// header is a decoded record header.
type header struct {
	pos    int // offset of the record
	length int
	seq    uint64
	time   int64
	pri    byte
	svcLen int
}

func (r *Ring) header(pos int) header {
	var b [headerLen]byte
	r.read(pos, b[:])
	return header{
		pos:    pos,
		length: int(binary.BigEndian.Uint32(b[offLen:])),
		seq:    binary.BigEndian.Uint64(b[offSeq:]),
		time:   int64(binary.BigEndian.Uint64(b[offTime:])),
		pri:    b[offPri],
		svcLen: int(b[offSvcLen]),
	}
}

// decode turns a record back into a Record; its strings are copies (one
// allocation for service and message together).
func (r *Ring) decode(h header) Record {
	textLen := h.length - headerLen
	var sb strings.Builder
	sb.Grow(textLen)
	start := (h.pos + headerLen) % len(r.buf)
	if end := start + textLen; end <= len(r.buf) {
		sb.Write(r.buf[start:end])
	} else {
		sb.Write(r.buf[start:])
		sb.Write(r.buf[:end-len(r.buf)])
	}
	text := sb.String()
	return Record{
		Seq:      h.seq,
		Time:     time.Unix(0, h.time),
		Facility: Facility(h.pri >> 3),
		Severity: Severity(h.pri & 7),
		Service:  text[:h.svcLen],
		Msg:      text[h.svcLen:],
	}
}

// each calls fn with the header of every record, oldest first, until fn
// returns false. r.mu is held.
func (r *Ring) each(fn func(h header) bool) {
	pos := r.head
	for range r.count {
		h := r.header(pos)
		if !fn(h) {
			return
		}
		pos = (pos + h.length) % len(r.buf)
	}
}

// Filter selects records. Note that Facility 0 is Kern: a filter that
// takes every facility says Facility: AnyFacility (see All).
type Filter struct {
	// MinSeverity keeps records at least this severe (Severity <=
	// MinSeverity). 0 means no limit, the same as Debug; see EmergOnly.
	MinSeverity Severity
	// EmergOnly keeps only Emerg records (MinSeverity cannot say so:
	// its zero value means "all").
	EmergOnly bool
	Service   string // exact service name; "" any
	Contains  string // substring of the message or the service; "" any
	Facility  int    // facility number; AnyFacility (-1) any
	Last      int    // only the last Last matching records; 0 all
	After     uint64 // only records with Seq > After
}

// AnyFacility is Filter.Facility's "any facility".
const AnyFacility = -1

// All returns the filter that selects every record.
func All() Filter { return Filter{Facility: AnyFacility} }

// matchHeader applies the filters that need no decoding.
func (f *Filter) matchHeader(h header) bool {
	if h.seq <= f.After {
		return false
	}
	sev := Severity(h.pri & 7)
	if f.EmergOnly && sev != Emerg {
		return false
	}
	if f.MinSeverity != 0 && sev > f.MinSeverity {
		return false
	}
	if f.Facility >= 0 && int(h.pri>>3) != f.Facility {
		return false
	}
	return true
}

func (f *Filter) matchText(rec *Record) bool {
	if f.Service != "" && rec.Service != f.Service {
		return false
	}
	if f.Contains != "" && !strings.Contains(rec.Msg, f.Contains) && !strings.Contains(rec.Service, f.Contains) {
		return false
	}
	return true
}

// Records returns the records f selects, oldest first.
func (r *Ring) Records(f Filter) []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	recs, _ := r.collect(&f)
	return recs
}

// collect returns the records f selects and the Seq of the newest record
// in the ring. r.mu is held.
func (r *Ring) collect(f *Filter) ([]Record, uint64) {
	var recs []Record
	r.each(func(h header) bool {
		if !f.matchHeader(h) {
			return true
		}
		rec := r.decode(h)
		if f.matchText(&rec) {
			recs = append(recs, rec)
		}
		return true
	})
	if f.Last > 0 && len(recs) > f.Last {
		recs = append([]Record(nil), recs[len(recs)-f.Last:]...)
	}
	return recs, r.seq
}

// Follow calls fn with the records f selects that are in the ring now
// (f.Last applies to these), then with every new matching record as it
// is added, until ctx is done (it returns ctx.Err()) or fn returns an
// error (returned). It waits for Add without polling. fn runs without
// the ring's lock held, so it may log. Records overwritten before Follow
// read them are skipped: their Seq numbers are missing.
func (r *Ring) Follow(ctx context.Context, f Filter, fn func(Record) error) error {
	for {
		r.mu.Lock()
		recs, newest := r.collect(&f)
		var wake chan struct{}
		if len(recs) == 0 {
			if r.notify == nil {
				r.notify = make(chan struct{})
			}
			wake = r.notify
		}
		r.mu.Unlock()

		f.Last = 0       // Last limits the backlog only
		f.After = newest // everything up to newest was looked at
		for _, rec := range recs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		if wake == nil {
			continue // more may have arrived while fn ran
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		}
	}
}

// Stats are the ring's counters.
type Stats struct {
	Records int // records held
	Bytes   int // bytes they take (headers included)
	Size    int // the ring's size in bytes
	// Written counts records ever added, Overwritten those pushed out
	// to make room for newer ones.
	Written, Overwritten uint64
	// Truncated counts records whose message was cut (TruncatedMarker).
	Truncated uint64
}

// Stats returns the ring's counters.
func (r *Ring) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{
		Records:     r.count,
		Bytes:       r.used,
		Size:        len(r.buf),
		Written:     r.seq,
		Overwritten: r.overwrite,
		Truncated:   r.truncated,
	}
}

// lastSeq is the Seq of the newest record (0: none yet).
func (r *Ring) lastSeq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}
