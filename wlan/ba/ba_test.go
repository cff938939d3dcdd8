package ba

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
)

var t0 = time.Unix(1_800_000_000, 0)

func newPair(t *testing.T, origBuf, recipBuf uint16, timeoutTU uint16) (*Peer[int], *Peer[int]) {
	t.Helper()
	var a, b Peer[int]
	o, err := NewOriginator(5, origBuf, timeoutTU, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRecipient[int](5, recipBuf, 128, 100*time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	a.Orig[5] = o
	b.Recip[5] = r
	return &a, &b
}

// The request's bytes against the field layout of 802.11-2016 9.6.5.2.
func TestRequestBytes(t *testing.T) {
	o, _ := NewOriginator(5, 64, 0, true)
	got, err := o.Start(nil, 4095+2, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := "03" + "00" + "01" + // category Block Ack, ADDBA Request, dialog 1
		"1710" + // params: A-MSDU 1, immediate 1<<1, TID 5<<2, buffer 64<<6 = 0x1017
		"0000" + // timeout
		"1000" // SSN 1 << 4
	if hex.EncodeToString(got) != want {
		t.Fatalf("request %x, want %s", got, want)
	}
}

func TestNegotiation(t *testing.T) {
	a, b := newPair(t, 64, 32, 0)
	req, err := a.Orig[5].Start(nil, 100, t0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Orig[5].State() != Requested {
		t.Fatal(a.Orig[5].State())
	}
	resp, err := b.HandleAction(nil, req, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.HandleAction(nil, resp, t0); err != nil {
		t.Fatal(err)
	}
	o, r := a.Orig[5], b.Recip[5]
	if o.State() != Established || o.BufSize() != 32 || o.AMSDU() {
		t.Fatalf("originator %v buf %d amsdu %v", o.State(), o.BufSize(), o.AMSDU())
	}
	if r.State() != Established || r.Reorder() == nil || r.Reorder().Head() != 100 {
		t.Fatal("recipient not set up at the SSN")
	}
	// Frames go through the reorder buffer: 101 waits for 100.
	rb := r.Reorder()
	rb.Add(101, 101, t0)
	if _, ok := rb.Pop(); ok {
		t.Fatal("101 released before 100")
	}
	// A BAR moves the window past the lost 100.
	if !r.HandleBAR(101, t0) {
		t.Fatal("BAR refused")
	}
	if v, ok := rb.Pop(); !ok || v != 101 {
		t.Fatalf("after BAR: %v %v", v, ok)
	}
	// A second response to the same dialog is not expected.
	if _, err := a.HandleAction(nil, resp, t0); err != ErrState {
		t.Fatal(err)
	}
	// DELBA from the originator ends both sides.
	del := o.Stop(nil, ReasonEndBA)
	if _, err := b.HandleAction(nil, del, t0); err != nil {
		t.Fatal(err)
	}
	if o.State() != Idle || r.State() != Idle || r.HandleBAR(5, t0) {
		t.Fatal("not torn down")
	}
	d, _ := wlan.ParseDELBA(del[2:])
	if !d.Initiator || d.TID != 5 || d.Reason != ReasonEndBA {
		t.Fatalf("DELBA %+v", d)
	}
}

func TestDeclinedAndCooldown(t *testing.T) {
	a, _ := newPair(t, 64, 64, 0)
	var none Peer[int] // runs no recipient
	req, _ := a.Orig[5].Start(nil, 0, t0)
	resp, err := none.HandleAction(nil, req, t0)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := wlan.ParseADDBAResp(resp[2:])
	if r.Status != wlan.StatusRequestDeclined {
		t.Fatalf("status %d", r.Status)
	}
	a.HandleAction(nil, resp, t0)
	o := a.Orig[5]
	if o.State() != Idle {
		t.Fatal(o.State())
	}
	if _, err := o.Start(nil, 0, t0.Add(time.Second)); err != ErrCool {
		t.Fatal(err)
	}
	if _, err := o.Start(nil, 0, t0.Add(Cooldown)); err != nil {
		t.Fatal(err)
	}
	// Delayed Block Ack is declined by a recipient.
	rc, _ := NewRecipient[int](5, 64, 64, time.Second, false)
	delayed := wlan.ADDBAReq{Dialog: 9, Params: wlan.NewBAParams(5, 64, false) &^ 2}
	out := rc.HandleRequest(nil, &delayed, t0)
	if r, _ := wlan.ParseADDBAResp(out[2:]); r.Status != wlan.StatusRequestDeclined || rc.State() != Idle {
		t.Fatalf("delayed: %+v %v", r, rc.State())
	}
}

func TestRequestRetriesThenGivesUp(t *testing.T) {
	o, _ := NewOriginator(1, 64, 0, false)
	o.Start(nil, 0, t0)
	var sent int
	for i := 1; i <= 5; i++ {
		out := o.Tick(nil, t0.Add(time.Duration(i)*ResponseTimeout))
		if len(out) > 0 {
			sent++
			if out[2] != uint8(1+sent) {
				t.Errorf("dialog %d, want %d", out[2], 1+sent)
			}
		}
	}
	if sent != MaxRequests-1 || o.State() != Idle {
		t.Fatalf("resent %d, state %v", sent, o.State())
	}
	// A late answer to the old dialog is ignored.
	if err := o.HandleResponse(&wlan.ADDBAResp{Dialog: 1, Params: wlan.NewBAParams(1, 64, false)}, t0); err != ErrState {
		t.Fatal(err)
	}
}

func TestInactivityTimeout(t *testing.T) {
	a, b := newPair(t, 64, 64, 100) // 100 TU
	req, _ := a.Orig[5].Start(nil, 0, t0)
	resp, _ := b.HandleAction(nil, req, t0)
	a.HandleAction(nil, resp, t0)
	o, r := a.Orig[5], b.Recip[5]
	at := t0.Add(90 * time.Millisecond)
	o.Activity(at)
	r.Activity(at)
	if len(o.Tick(nil, t0.Add(150*time.Millisecond))) != 0 || len(r.Tick(nil, t0.Add(150*time.Millisecond))) != 0 {
		t.Fatal("timed out while active")
	}
	end := at.Add(100 * 1024 * time.Microsecond)
	del := r.Tick(nil, end)
	if r.State() != Idle || len(del) == 0 {
		t.Fatal("recipient did not time out")
	}
	if _, err := a.HandleAction(nil, del, end); err != nil || o.State() != Idle {
		t.Fatalf("originator after the recipient's DELBA: %v %v", err, o.State())
	}
	if d, _ := wlan.ParseDELBA(del[2:]); d.Initiator || d.Reason != ReasonTimeout {
		t.Fatalf("%+v", d)
	}
}

func FuzzHandleAction(f *testing.F) {
	o, _ := NewOriginator(5, 64, 0, true)
	req, _ := o.Start(nil, 7, t0)
	f.Add(req)
	f.Add((&wlan.ADDBAResp{Dialog: 1, Params: wlan.NewBAParams(5, 64, true)}).Append(nil))
	f.Add((&wlan.DELBA{Initiator: true, TID: 5, Reason: 37}).Append(nil))
	f.Add([]byte{3})
	f.Fuzz(func(t *testing.T, body []byte) {
		a, b := newPair(t, 64, 64, 10)
		a.Orig[5].Start(nil, 0, t0)
		out, _ := b.HandleAction(nil, body, t0)
		out2, _ := a.HandleAction(nil, body, t0)
		// The only replies are ADDBA Responses, to requests.
		for _, o := range [][]byte{out, out2} {
			if len(o) != 0 && (!bytes.HasPrefix(o, []byte{3, 1}) || !bytes.HasPrefix(body, []byte{3, 0})) {
				t.Fatalf("reply %x to %x", o, body)
			}
		}
		b.Recip[5].Tick(nil, t0.Add(time.Hour))
		a.Orig[5].Tick(nil, t0.Add(time.Hour))
	})
}
