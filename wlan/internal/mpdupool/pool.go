// Package mpdupool is a fixed pool of MPDU buffers with their
// radio.TxRequest, shared by the AP and the station: a frame lent to the
// radio stays the radio's until its Done, then comes back, so the transmit
// path allocates nothing and the number of frames queued in the radio is
// bounded.
package mpdupool

import (
	"sync"

	"github.com/gowrt/gowrt/wlan/radio"
)

// Frame is one MPDU buffer and the request that carries it.
type Frame struct {
	Req  radio.TxRequest
	Buf  []byte // build the MPDU in Buf[:0]
	one  [1][]byte
	next *Frame
	pool *Pool
}

// Pool is a free list of frames. It has a lock of its own: a radio may
// report completion from inside Transmit, while the submitter holds its.
type Pool struct {
	mu     sync.Mutex
	free   *Frame
	done   func(*radio.TxRequest, *radio.TxStatus)
	onDone func(*radio.TxRequest, *radio.TxStatus)
}

// New makes n frames of size bytes each; onDone, if set, sees every
// request's outcome before its frame returns to the pool.
func New(n, size int, onDone func(*radio.TxRequest, *radio.TxStatus)) *Pool {
	p := &Pool{onDone: onDone}
	p.done = p.complete // one method value for every request
	for i := 0; i < n; i++ {
		f := &Frame{Buf: make([]byte, 0, size), pool: p}
		f.Req.Cookie = f
		f.next = p.free
		p.free = f
	}
	return p
}

// Get takes a free frame, or nil when all are with the radio.
func (p *Pool) Get() *Frame {
	p.mu.Lock()
	f := p.free
	if f != nil {
		p.free = f.next
		f.next = nil
	}
	p.mu.Unlock()
	return f
}

// Put returns a frame that was not submitted.
func (p *Pool) Put(f *Frame) {
	f.one[0] = nil
	f.Req.MPDUs = nil
	p.mu.Lock()
	f.next = p.free
	p.free = f
	p.mu.Unlock()
}

func (p *Pool) complete(req *radio.TxRequest, st *radio.TxStatus) {
	if p.onDone != nil {
		p.onDone(req, st)
	}
	if f, ok := req.Cookie.(*Frame); ok && f.pool == p {
		p.Put(f)
	}
}

// Submit sends mpdu (built in f.Buf) through r as a single-MPDU PPDU. On
// error the frame is back in the pool and the error is the radio's.
func (p *Pool) Submit(r radio.Radio, f *Frame, mpdu []byte, key int, noAck bool, series *[radio.MaxSeries]radio.Series) error {
	f.Buf = mpdu
	f.one[0] = mpdu
	f.Req.MPDUs = f.one[:]
	f.Req.Series = *series
	f.Req.Key = key
	f.Req.NoAck = noAck
	f.Req.RTS = false
	f.Req.Queue = 0
	f.Req.Done = p.done
	if r == nil {
		p.Put(f)
		return radio.ErrStopped
	}
	if err := r.Transmit(&f.Req); err != nil {
		p.Put(f)
		return err
	}
	return nil
}
