package usb

import "sync/atomic"

// PortChangeHook keeps a host controller driver's HostController.SetPortChange
// callback: installed by the enumerator, read from the driver's interrupt
// or poll context without a lock.
type PortChangeHook struct {
	f atomic.Pointer[func(port int)]
}

// Set installs f (nil: no calls).
func (h *PortChangeHook) Set(f func(port int)) {
	if f == nil {
		h.f.Store(nil)
		return
	}
	h.f.Store(&f)
}

// Get returns the callback installed, nil if none.
func (h *PortChangeHook) Get() func(port int) {
	if p := h.f.Load(); p != nil {
		return *p
	}
	return nil
}
