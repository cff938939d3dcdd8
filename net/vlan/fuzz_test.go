package vlan_test

import (
	"bytes"
	"encoding/binary"
	"github.com/gowrt/gowrt/internal/testutil"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/vlan"
)

// FuzzReceive: any frame from the parent is delivered to the right child
// with exactly its tag removed, or dropped under exactly one counter; the
// parent's buffer is never written; nothing panics.
func FuzzReceive(f *testing.F) {
	for _, s := range []string{arpTagged, arpUntagged, udpTagged, udpUntagged} {
		f.Add(testutil.Unhex(f, s))
	}
	f.Add([]byte{})
	f.Add(testutil.Unhex(f, arpTagged)[:17])
	f.Add(testutil.Unhex(f, arpTagged)[:18])
	bad := testutil.Unhex(f, arpTagged)
	bad[14], bad[15] = 0x0f, 0xff
	f.Add(bad)
	prio := testutil.Unhex(f, arpTagged)
	prio[14], prio[15] = 0x20, 0x00
	f.Add(prio)
	unknown := testutil.Unhex(f, arpTagged)
	unknown[15] = 9
	f.Add(unknown)
	stopped := testutil.Unhex(f, arpTagged)
	stopped[14], stopped[15] = 0x0f, 0xfe // 4094: a child that never starts
	f.Add(stopped)

	n := &syncNIC{}
	tr, err := vlan.New(n, vlan.Config{VIDs: []uint16{1, 2, 4094}, Untagged: 1})
	if err != nil {
		f.Fatal(err)
	}
	var got []byte
	var gotVID uint16
	for _, vid := range []uint16{1, 2} {
		p, _ := tr.Port(vid)
		if err := p.Start(handlerFunc(func(b []byte) { got, gotVID = append(got[:0], b...), vid })); err != nil {
			f.Fatal(err)
		}
	}
	ports := tr.Ports()
	total := func() uint64 {
		s := &tr.Stats
		sum := s.RxRunt.Load() + s.RxOversize.Load() + s.RxBadVID.Load() + s.RxUnknownVID.Load() + s.RxUntagged.Load()
		for _, p := range ports {
			sum += p.Stats.RxFrames.Load() + p.Stats.RxStopped.Load()
		}
		return sum
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		before := total()
		orig := bytes.Clone(frame)
		got, gotVID = got[:0], 0
		n.h.Receive(frame)
		if !bytes.Equal(frame, orig) {
			t.Fatal("the borrowed frame was written")
		}
		if total() != before+1 {
			t.Fatalf("frame counted %d times", total()-before)
		}
		if gotVID == 0 {
			return
		}
		// Delivered: check against the frame's own layout.
		want := frame
		vid := uint16(1) // untagged
		if binary.BigEndian.Uint16(frame[12:]) == 0x8100 {
			want = append(append([]byte{}, frame[:12]...), frame[16:]...)
			if v := binary.BigEndian.Uint16(frame[14:]) & 0xfff; v != 0 {
				vid = v
			}
		}
		if gotVID != vid || !bytes.Equal(got, want) {
			t.Fatalf("VID %d got % x\nwant VID %d % x", gotVID, got, vid, want)
		}
		if len(got) < gnet.EthHeaderLen {
			t.Fatalf("delivered a %d-byte frame", len(got))
		}
	})
}
