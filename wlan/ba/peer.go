package ba

import (
	"errors"
	"time"

	"github.com/gowrt/gowrt/wlan"
)

// ErrNotBlockAck is returned for an action frame of another category.
var ErrNotBlockAck = errors.New("ba: not a Block Ack action frame")

// Peer holds both sides of the agreements with one peer, per TID; nil
// entries are TIDs this side does not run.
type Peer[T any] struct {
	Orig  [8]*Originator
	Recip [8]*Recipient[T]
}

// HandleAction takes a Block Ack action frame body from the peer (from
// the air: anything may arrive) and appends the reply, if any, to dst:
// an ADDBA Response to a request (declining it, status 37, for a TID
// this side runs no recipient for). Malformed bodies and responses nobody
// waits for return an error and no reply.
func (p *Peer[T]) HandleAction(dst, body []byte, now time.Time) ([]byte, error) {
	cat, act, rest, err := wlan.ParseAction(body)
	if err != nil {
		return dst, err
	}
	if cat != wlan.CategoryBlockAck {
		return dst, ErrNotBlockAck
	}
	switch act {
	case wlan.ActionADDBAReq:
		req, err := wlan.ParseADDBAReq(rest)
		if err != nil {
			return dst, err
		}
		tid := req.Params.TID()
		if tid >= 8 || p.Recip[tid] == nil {
			resp := wlan.ADDBAResp{Dialog: req.Dialog, Status: wlan.StatusRequestDeclined, Params: req.Params, Timeout: req.Timeout}
			return resp.Append(dst), nil
		}
		return p.Recip[tid].HandleRequest(dst, &req, now), nil
	case wlan.ActionADDBAResp:
		resp, err := wlan.ParseADDBAResp(rest)
		if err != nil {
			return dst, err
		}
		tid := resp.Params.TID()
		if tid >= 8 || p.Orig[tid] == nil {
			return dst, ErrDialog
		}
		return dst, p.Orig[tid].HandleResponse(&resp, now)
	case wlan.ActionDELBA:
		d, err := wlan.ParseDELBA(rest)
		if err != nil {
			return dst, err
		}
		if d.TID >= 8 {
			return dst, ErrTID
		}
		if d.Initiator {
			if r := p.Recip[d.TID]; r != nil {
				r.HandleDELBA(&d)
			}
		} else if o := p.Orig[d.TID]; o != nil {
			o.HandleDELBA(&d)
		}
		return dst, nil
	}
	return dst, ErrNotBlockAck
}
