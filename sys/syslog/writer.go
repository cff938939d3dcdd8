package syslog

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// MaxLine is the longest partial line a Writer keeps while it waits for
// the newline; a longer run of text without one is logged in pieces of
// this size. The kernel's own console lines are at most 1 KiB
// (LOG_LINE_MAX in kernel/printk/printk.c is 1024 minus a prefix).
const MaxLine = 1024

// Writer returns an io.Writer that adds one record per line of text
// written to it (facility fac, severity sev, service), for the kernel
// console and other line-oriented text. A line may arrive in several
// Writes: the unfinished part is kept (at most MaxLine bytes) until its
// newline. "\r\n" ends a line like "\n"; empty lines are dropped. Writes
// never fail.
func (r *Ring) Writer(fac Facility, sev Severity, service string) io.Writer {
	return &lineWriter{ring: r, fac: fac, sev: sev, service: service, partial: make([]byte, 0, MaxLine)}
}

type lineWriter struct {
	ring    *Ring
	fac     Facility
	sev     Severity
	service string

	mu      sync.Mutex
	partial []byte // text after the last newline; cap MaxLine
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.keep(p)
			break
		}
		w.keep(p[:i])
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

// keep buffers a piece of an unfinished line, logging the buffer first
// whenever it is full.
func (w *lineWriter) keep(p []byte) {
	for len(p) > 0 {
		if len(w.partial) == cap(w.partial) {
			w.flush()
		}
		k := min(len(p), cap(w.partial)-len(w.partial))
		w.partial = append(w.partial, p[:k]...)
		p = p[k:]
	}
}

// flush logs the buffered line (without a trailing '\r') and empties it.
func (w *lineWriter) flush() {
	line := w.partial
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) > 0 {
		w.ring.add(time.Now(), w.fac, w.sev, w.service, "", line)
	}
	w.partial = w.partial[:0]
}
