package syslog

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// ServiceKey is the slog attribute key that names the record's service
// instead of the handler's (at the top level only, not inside a group).
const ServiceKey = "service"

// Handler returns a slog.Handler that adds records of facility fac and
// service to the ring, for log records at or above level (nil: Info).
// Attributes follow the message as key=value (groups as group.key,
// values with spaces or quotes quoted in Go syntax); a top-level
// "service" attribute sets Record.Service instead.
//
// Levels map to severities: below Info Debug, below Warn Info, below
// Error Warning, Error and above Err.
func (r *Ring) Handler(fac Facility, service string, level slog.Leveler) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &handler{ring: r, fac: fac, service: service, level: level}
}

type handler struct {
	ring    *Ring
	fac     Facility
	service string
	level   slog.Leveler
	attrs   []byte // WithAttrs' attributes, rendered (" k=v k2=v2")
	group   string // WithGroup prefix ("g1.g2.") for later attributes
}

// SeverityOf returns the syslog severity of a slog level.
func SeverityOf(l slog.Level) Severity {
	switch {
	case l < slog.LevelInfo:
		return Debug
	case l < slog.LevelWarn:
		return Info
	case l < slog.LevelError:
		return Warning
	default:
		return Err
	}
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

// bufPool holds the buffers messages are rendered into, so logging
// allocates no buffer per line.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func (h *handler) Handle(_ context.Context, rec slog.Record) error {
	bp := bufPool.Get().(*[]byte)
	buf := append((*bp)[:0], h.attrs...)
	service := h.service
	rec.Attrs(func(a slog.Attr) bool {
		if h.group == "" && a.Key == ServiceKey {
			if a.Value.Kind() == slog.KindString {
				service = a.Value.String()
			} else {
				service = a.Value.Resolve().String()
			}
			return true
		}
		buf = appendAttr(buf, h.group, a)
		return true
	})
	t := rec.Time
	if t.IsZero() {
		t = time.Now()
	}
	h.ring.add(t, h.fac, SeverityOf(rec.Level), service, rec.Message, buf)
	if cap(buf) <= 16<<10 { // don't keep a huge one-off buffer
		*bp = buf
		bufPool.Put(bp)
	}
	return nil
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h2 := *h
	h2.attrs = append([]byte(nil), h.attrs...)
	for _, a := range attrs {
		if h.group == "" && a.Key == ServiceKey {
			h2.service = a.Value.Resolve().String()
			continue
		}
		h2.attrs = appendAttr(h2.attrs, h.group, a)
	}
	return &h2
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.group = h.group + name + "."
	return &h2
}

// appendAttr renders " prefix.key=value" (groups flattened), following
// slog's rules: an empty attribute is dropped, a group with an empty key
// is inlined, an empty group is dropped.
func appendAttr(buf []byte, prefix string, a slog.Attr) []byte {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return buf
	}
	if a.Value.Kind() == slog.KindGroup {
		sub := prefix
		if a.Key != "" {
			sub = prefix + a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			buf = appendAttr(buf, sub, ga)
		}
		return buf
	}
	buf = append(buf, ' ')
	if needsQuote(prefix) || needsQuote(a.Key) {
		buf = strconv.AppendQuote(buf, prefix+a.Key)
	} else {
		buf = append(buf, prefix...)
		buf = append(buf, a.Key...)
	}
	buf = append(buf, '=')
	return appendValue(buf, a.Value)
}

func appendValue(buf []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return appendString(buf, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(buf, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(buf, v.Uint64(), 10)
	case slog.KindFloat64:
		return strconv.AppendFloat(buf, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(buf, v.Bool())
	case slog.KindDuration:
		return appendString(buf, v.Duration().String())
	case slog.KindTime:
		return v.Time().AppendFormat(buf, time.RFC3339Nano)
	default:
		if err, ok := v.Any().(error); ok {
			return appendString(buf, err.Error())
		}
		return appendString(buf, fmt.Sprint(v.Any()))
	}
}

func appendString(buf []byte, s string) []byte {
	if s == "" || needsQuote(s) {
		return strconv.AppendQuote(buf, s)
	}
	return append(buf, s...)
}

// needsQuote reports whether s must be quoted to read back as one value:
// empty, or holding a space, '=', '"', a control character or invalid
// UTF-8.
func needsQuote(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}
