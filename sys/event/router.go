package event

import (
	"net/netip"
	"time"
)

// The router's events. Values are plain structs so publishing one does not
// allocate (a DNS slice is the publisher's own, shared read-only with every
// subscriber: subscribers must not modify it).

// WANUp: the WAN interface has an address (DHCP lease or static).
type WANUp struct {
	Addr   netip.Prefix // the WAN address and its prefix
	Router netip.Addr   // default gateway; invalid if none
	DNS    []netip.Addr // upstream resolvers; read-only
}

// WANDown: the WAN lost its address (lease expired, link down, released).
type WANDown struct {
	Reason string
}

// WAN is the WAN topic's state: up with its addresses, or down with why.
// One topic carries both so a late subscriber learns the current state
// (a WANUp topic alone would keep reporting up after the WAN went down).
type WAN struct {
	Up   bool
	Info WANUp   // valid when Up
	Down WANDown // valid when !Up
}

// Up returns the WAN state for w.
func Up(w WANUp) WAN { return WAN{Up: true, Info: w} }

// Down returns the WAN state "down because reason".
func Down(reason string) WAN { return WAN{Down: WANDown{Reason: reason}} }

// LinkChange: a port's carrier came up or went down.
type LinkChange struct {
	Port      string
	Up        bool
	SpeedMbps int // 0 when down
}

// AddrChange: an interface's address was added (Old invalid), removed
// (New invalid) or replaced.
type AddrChange struct {
	Iface    string
	Old, New netip.Prefix
}

// TimeSynced: the wall clock was set from SNTP. Step is how far the clock
// was stepped or slewed (the measured offset); Server is who answered.
type TimeSynced struct {
	Step    time.Duration
	Stepped bool // stepped at once rather than slewed
	Server  string
}

// InterfaceUp: a network interface was created and brought up.
type InterfaceUp struct {
	Name string
}

// ConfigCommitted: a configuration commit was saved to storage. Packages
// names the UCI packages ("network", "dhcp" …) whose content changed, in
// name order; read-only for subscribers. Services that use one of them
// apply the new values without a reboot.
type ConfigCommitted struct {
	Seq      uint64 // commit number since boot, from 1
	Packages []string
}

// ServiceState: a supervised service changed state ("starting",
// "running", "backoff", "parked", "stopped" …). Err is the error or panic
// that ended its last run, empty if none.
type ServiceState struct {
	Service  string
	State    string
	Restarts int
	Err      string
}

// Bus is the router's set of topics. One Bus is made at boot and handed
// to every service; later services add their topics here.
type Bus struct {
	WAN         *Topic[WAN]             // state: current WAN state
	Link        *Topic[LinkChange]      // events, per port
	Addr        *Topic[AddrChange]      // events
	Time        *Topic[TimeSynced]      // state: latest sync
	InterfaceUp *Topic[InterfaceUp]     // events
	Config      *Topic[ConfigCommitted] // state: the latest commit
	Service     *Topic[ServiceState]    // events, from the supervisor
}

// NewBus makes the router's topics with their default queue lengths.
func NewBus() *Bus {
	return &Bus{
		WAN:         NewStateTopic[WAN]("wan", 0),
		Link:        NewTopic[LinkChange]("link", 0),
		Addr:        NewTopic[AddrChange]("addr", 0),
		Time:        NewStateTopic[TimeSynced]("time", 0),
		InterfaceUp: NewTopic[InterfaceUp]("interface-up", 0),
		Config:      NewStateTopic[ConfigCommitted]("config", 0),
		Service:     NewTopic[ServiceState]("service", 0),
	}
}

// Stats returns every topic's counters (for the status page).
func (b *Bus) Stats() []Stats {
	return []Stats{b.WAN.Stats(), b.Link.Stats(), b.Addr.Stats(), b.Time.Stats(), b.InterfaceUp.Stats(),
		b.Config.Stats(), b.Service.Stats()}
}
