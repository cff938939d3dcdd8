// Package ba is the Block Ack session logic of 802.11-2016 10.24 that an
// AP and a station both run, per peer and TID: the originator (the side
// sending A-MPDUs) negotiates an agreement with ADDBA Request/Response,
// the recipient accepts or declines it and runs the receive reorder
// buffer (wlan/reorder), and either side ends it with DELBA or on the
// inactivity timeout.
//
// Pure logic: methods take the time and the parsed frames, and append
// the action frame bodies to send (category and action included, ready
// for an action management frame) to a caller's buffer. No I/O, no
// goroutines, nothing allocated but the reorder buffer at setup.
package ba

import (
	"errors"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/reorder"
)

// Reason codes of DELBA (802.11-2016 Table 9-45).
const (
	ReasonEndBA     uint16 = 37 // the peer no longer wants the agreement
	ReasonUnknownBA uint16 = 38 // no agreement for this TID
	ReasonTimeout   uint16 = 39 // the Block Ack timeout expired
)

const (
	// ResponseTimeout is how long an originator waits for an ADDBA
	// Response before asking again (mac80211's ADDBA_RESP_INTERVAL, 1 s).
	ResponseTimeout = time.Second
	// MaxRequests is how often it asks before giving up.
	MaxRequests = 3
	// Cooldown is how long an originator waits after a refusal or no
	// answer before it may negotiate again.
	Cooldown = 10 * time.Second
	// tu is one time unit (802.11-2016 3.2).
	tu = 1024 * time.Microsecond
)

// State is where a session is.
type State uint8

const (
	Idle State = iota
	Requested
	Established
)

func (s State) String() string {
	switch s {
	case Requested:
		return "requested"
	case Established:
		return "established"
	}
	return "idle"
}

// Errors.
var (
	ErrState  = errors.New("ba: not in a state for this")
	ErrDialog = errors.New("ba: response to another dialog or TID")
	ErrCool   = errors.New("ba: negotiation refused recently, cooling down")
	ErrTID    = errors.New("ba: TID out of range")
)

// Originator is the sending side of one TID's agreement.
type Originator struct {
	tid      uint8
	maxBuf   uint16
	timeout  uint16 // TU we ask for
	amsdu    bool
	state    State
	dialog   uint8
	ssn      uint16
	sentAt   time.Time
	requests int
	coolEnd  time.Time
	lastAct  time.Time
	// Negotiated.
	bufSize    uint16
	agreedTO   uint16
	agreedMSDU bool
}

// NewOriginator makes the originator side for tid, offering a buffer of
// bufSize (1..64), an inactivity timeout in TU (0: none) and whether
// A-MSDUs may go inside A-MPDUs.
func NewOriginator(tid uint8, bufSize uint16, timeoutTU uint16, amsdu bool) (*Originator, error) {
	if tid >= 8 {
		return nil, ErrTID
	}
	if bufSize == 0 || bufSize > wlan.MaxBAWindow {
		bufSize = wlan.MaxBAWindow
	}
	return &Originator{tid: tid, maxBuf: bufSize, timeout: timeoutTU, amsdu: amsdu}, nil
}

// State returns the session's state.
func (o *Originator) State() State { return o.state }

// BufSize returns the negotiated window (0 unless established): the
// most MPDUs an aggregate may span.
func (o *Originator) BufSize() uint16 {
	if o.state != Established {
		return 0
	}
	return o.bufSize
}

// AMSDU reports whether the agreement allows A-MSDUs in A-MPDUs.
func (o *Originator) AMSDU() bool { return o.state == Established && o.agreedMSDU }

// Start begins negotiation with starting sequence number ssn (the TID's
// next sequence number) and appends the ADDBA Request to dst.
func (o *Originator) Start(dst []byte, ssn uint16, now time.Time) ([]byte, error) {
	if o.state != Idle {
		return dst, ErrState
	}
	if now.Before(o.coolEnd) {
		return dst, ErrCool
	}
	o.state = Requested
	o.requests = 0
	o.ssn = ssn % wlan.SeqModulo
	return o.request(dst, now), nil
}

func (o *Originator) request(dst []byte, now time.Time) []byte {
	o.dialog++
	if o.dialog == 0 {
		o.dialog = 1
	}
	o.requests++
	o.sentAt = now
	r := wlan.ADDBAReq{Dialog: o.dialog, Params: wlan.NewBAParams(o.tid, o.maxBuf, o.amsdu),
		Timeout: o.timeout, StartSeq: wlan.NewSeqControl(o.ssn, 0)}
	return r.Append(dst)
}

// HandleResponse takes the peer's ADDBA Response. A success sets up the
// agreement with the smaller buffer and the peer's timeout; a refusal,
// or a response the originator cannot use (delayed policy, another TID),
// ends in Idle with a cooldown. It returns ErrDialog for a response to
// something else (ignore it) and ErrState when none was expected.
func (o *Originator) HandleResponse(r *wlan.ADDBAResp, now time.Time) error {
	if o.state != Requested {
		return ErrState
	}
	if r.Dialog != o.dialog || r.Params.TID() != o.tid {
		return ErrDialog
	}
	if r.Status != wlan.StatusSuccess || !r.Params.Immediate() {
		o.fail(now)
		return nil
	}
	buf := r.Params.BufSize()
	if buf == 0 || buf > o.maxBuf {
		// 0: the recipient leaves it to us (10.24.2).
		buf = o.maxBuf
	}
	o.bufSize = buf
	o.agreedTO = r.Timeout
	o.agreedMSDU = o.amsdu && r.Params.AMSDU()
	o.state = Established
	o.lastAct = now
	return nil
}

func (o *Originator) fail(now time.Time) {
	o.state = Idle
	o.coolEnd = now.Add(Cooldown)
}

// Activity notes traffic under the agreement (a BlockAck received).
func (o *Originator) Activity(now time.Time) { o.lastAct = now }

// Tick runs the timers: a missing response is asked for again (the
// request is appended to dst) until MaxRequests, then given up; an
// agreement idle past its timeout is torn down (the DELBA is appended).
func (o *Originator) Tick(dst []byte, now time.Time) []byte {
	switch o.state {
	case Requested:
		if now.Sub(o.sentAt) < ResponseTimeout {
			return dst
		}
		if o.requests >= MaxRequests {
			o.fail(now)
			return dst
		}
		return o.request(dst, now)
	case Established:
		if o.agreedTO != 0 && now.Sub(o.lastAct) >= time.Duration(o.agreedTO)*tu {
			o.state = Idle
			d := wlan.DELBA{Initiator: true, TID: o.tid, Reason: ReasonTimeout}
			return d.Append(dst)
		}
	}
	return dst
}

// Stop ends the agreement (or the negotiation) and appends the DELBA.
func (o *Originator) Stop(dst []byte, reason uint16) []byte {
	if o.state == Idle {
		return dst
	}
	o.state = Idle
	d := wlan.DELBA{Initiator: true, TID: o.tid, Reason: reason}
	return d.Append(dst)
}

// HandleDELBA takes the recipient's DELBA for this TID.
func (o *Originator) HandleDELBA(d *wlan.DELBA) {
	if !d.Initiator && d.TID == o.tid {
		o.state = Idle
	}
}

// Recipient is the receiving side of one TID's agreement, with the
// reorder buffer its frames go through (frames of type T: whatever the
// MAC layer hands on, e.g. an index into its receive buffers).
type Recipient[T any] struct {
	tid       uint8
	maxBuf    uint16
	maxFrames int
	reorderTO time.Duration
	amsdu     bool
	state     State
	timeout   uint16
	lastAct   time.Time
	buf       *reorder.Buffer[T]
}

// NewRecipient makes the recipient side for tid: it accepts windows up
// to maxBuf (1..64), buffers at most maxFrames frames, gives up on a
// hole after reorderTimeout, and accepts A-MSDUs in A-MPDUs if amsdu.
func NewRecipient[T any](tid uint8, maxBuf uint16, maxFrames int, reorderTimeout time.Duration, amsdu bool) (*Recipient[T], error) {
	if tid >= 8 {
		return nil, ErrTID
	}
	if maxBuf == 0 || maxBuf > wlan.MaxBAWindow {
		maxBuf = wlan.MaxBAWindow
	}
	return &Recipient[T]{tid: tid, maxBuf: maxBuf, maxFrames: maxFrames, reorderTO: reorderTimeout, amsdu: amsdu}, nil
}

// State returns the session's state (Idle or Established).
func (r *Recipient[T]) State() State { return r.state }

// Reorder returns the reorder buffer of the agreement, nil without one.
// Frames still buffered when the agreement ends are released (Flush):
// Pop them before the next HandleRequest.
func (r *Recipient[T]) Reorder() *reorder.Buffer[T] { return r.buf }

// HandleRequest answers an ADDBA Request (appended to dst): it accepts
// an immediate Block Ack agreement for its TID with the smaller of the
// two buffer sizes and sets up a reorder buffer at the request's
// starting sequence number (replacing an existing agreement, whose
// frames are flushed first); it declines a delayed Block Ack.
func (r *Recipient[T]) HandleRequest(dst []byte, req *wlan.ADDBAReq, now time.Time) []byte {
	resp := wlan.ADDBAResp{Dialog: req.Dialog, Timeout: req.Timeout}
	p := req.Params
	switch {
	case p.TID() != r.tid:
		resp.Status = wlan.StatusInvalidParameters
		resp.Params = p
	case !p.Immediate():
		// Delayed Block Ack is not implemented (nor by mac80211).
		resp.Status = wlan.StatusRequestDeclined
		resp.Params = p
	default:
		size := p.BufSize()
		if size == 0 || size > r.maxBuf {
			size = r.maxBuf
		}
		if r.buf != nil {
			r.buf.Flush()
		}
		// A new buffer per agreement: agreements are rare (allocation
		// is at setup, never per frame).
		r.buf = reorder.New[T](req.StartSeq.Seq(), int(size), r.maxFrames, r.reorderTO)
		r.state = Established
		r.timeout = req.Timeout
		r.lastAct = now
		resp.Status = wlan.StatusSuccess
		resp.Params = wlan.NewBAParams(r.tid, size, r.amsdu && p.AMSDU())
	}
	return resp.Append(dst)
}

// Activity notes a frame received under the agreement.
func (r *Recipient[T]) Activity(now time.Time) { r.lastAct = now }

// HandleBAR moves the window for a BlockAckReq (frames before ssn are
// released, 10.24.7.3). It reports false when there is no agreement, in
// which case the caller answers with DELBA (ReasonUnknownBA).
func (r *Recipient[T]) HandleBAR(ssn uint16, now time.Time) bool {
	if r.state != Established {
		return false
	}
	r.lastAct = now
	r.buf.MoveWindow(ssn % wlan.SeqModulo)
	return true
}

// HandleDELBA takes the originator's DELBA: the agreement ends and the
// buffered frames are released in order.
func (r *Recipient[T]) HandleDELBA(d *wlan.DELBA) {
	if d.Initiator && d.TID == r.tid {
		r.end()
	}
}

func (r *Recipient[T]) end() {
	if r.state == Established {
		r.buf.Flush()
	}
	r.state = Idle
}

// Stop ends the agreement from this side and appends the DELBA.
func (r *Recipient[T]) Stop(dst []byte, reason uint16) []byte {
	if r.state != Established {
		return dst
	}
	r.end()
	d := wlan.DELBA{Initiator: false, TID: r.tid, Reason: reason}
	return d.Append(dst)
}

// Tick runs the timers: the reorder buffer's hole timeout, and the
// agreement's inactivity timeout (a DELBA appended to dst).
func (r *Recipient[T]) Tick(dst []byte, now time.Time) []byte {
	if r.state != Established {
		return dst
	}
	r.buf.Expire(now)
	if r.timeout != 0 && now.Sub(r.lastAct) >= time.Duration(r.timeout)*tu {
		return r.Stop(dst, ReasonTimeout)
	}
	return dst
}
