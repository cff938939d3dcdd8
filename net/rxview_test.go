package net_test

import (
	"bytes"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
)

func TestCopyRxView(t *testing.T) {
	v := gnet.CopyRxView([]byte("head"), []byte("-"), []byte("tail"))
	if got := v.AsSlice(); !bytes.Equal(got, []byte("head-tail")) {
		t.Fatalf("view holds %q", got)
	}
	v.Release()
	big := gnet.CopyRxView(make([]byte, gnet.RxBufSize+100))
	if big.Size() != gnet.RxBufSize {
		t.Fatalf("oversized input gave a %d-byte view, want it cut at %d", big.Size(), gnet.RxBufSize)
	}
	big.Release()
	if n := testing.AllocsPerRun(100, func() { gnet.CopyRxView([]byte("x"), []byte("y")).Release() }); n != 0 {
		t.Fatalf("%v allocations per view", n)
	}
}
