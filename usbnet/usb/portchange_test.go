package usb

import "testing"

func TestPortChangeHook(t *testing.T) {
	var h PortChangeHook
	if h.Get() != nil {
		t.Fatal("a callback before Set")
	}
	got := 0
	h.Set(func(port int) { got = port })
	h.Get()(3)
	if got != 3 {
		t.Errorf("callback saw port %d, want 3", got)
	}
	h.Set(nil)
	if h.Get() != nil {
		t.Error("a callback after Set(nil)")
	}
}
