// Package sim is the sim-mode board: gowrt's real drivers running as a
// host process against hostile hardware models, with Linux TAP devices as
// the Ethernet cables.
//
// The board is an AR9344 (MIPS 74Kc SoC) modelled on top of hwsim: the SoC
// model (reset, PLLs, DDR write buffers) from soc/ar71xx/ar71xxsim and two
// arge MAC models (GE0, GE1) from arge/argesim, each with a PHY model and
// a TAP device on its wire. The unmodified arge driver programs them
// through posted, reordering register writes and a non-coherent cache
// model; its interrupts go through the real intr.Dispatcher. Any hazard
// the models catch (a missing sync, a missing barrier) is reported on
// stderr, so running the firmware in sim mode is itself a driver test.
//
//	GE0  "wan"  tap gowrt-wan
//	GE1  "lan"  tap gowrt-lan
//
// NewTwin builds another kind of sim board: a router from
// board/ar71xx/boardfile as its hardware models (its SoC, MACs, switch and
// PHYs), brought up by wire.Ports, the bare-metal board's own code (see
// Twin). Twins register nothing.
//
// Importing the package registers the default board; Ports creates the TAP
// devices in the current network namespace (this needs root). New builds a
// board with other TAP names, for tests.
//
// The models are clocked by a goroutine that runs the simulated hardware
// whenever a wire, an interrupt or the driver gives it work. A frame
// arriving from a TAP device while the MAC's receive FIFO is full is held
// and retried rather than dropped: the simulated MAC is slower than the
// host's kernel, and dropping there would measure the simulator, not the
// firmware. A frame the MAC refuses for good (longer than MAX_FRAME_LEN,
// shorter than an Ethernet header, no link) is dropped at once and counted
// by the MAC model in its MIB counters, which the driver reads.
package sim

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gowrt/gowrt/arge"
	"github.com/gowrt/gowrt/arge/argesim"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/argeport"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/mdio/phy"
	"github.com/gowrt/gowrt/mdio/phy/physim"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/tap"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/soc/ar71xx/ar71xxsim"
)

// revAR9344 is the AR9344's REV_ID (Linux
// arch/mips/include/asm/mach-ath79/ar71xx_regs.h REV_ID_MAJOR_AR9344;
// FreeBSD sys/mips/atheros/ar934xreg.h).
const revAR9344 = 0x2120

// linkPoll is how often the board polls each port's PHY.
const linkPoll = 50 * time.Millisecond

// PortConfig is one modelled MAC's external port.
type PortConfig struct {
	Name string     // "lan", "wan"
	Role board.Role // default role in the router
	TAP  string     // TAP device name
	MAC  gnet.MAC   // station address
}

// Config configures a sim board.
type Config struct {
	// Ports, in GE0, GE1 order (at most two: the AR9344 has two MACs).
	Ports []PortConfig
	// Seed drives the models' hazards; 0 picks one from the clock.
	Seed uint64
	// Log receives model misuse reports (default: stderr).
	Log func(format string, a ...any)
}

// DefaultConfig is the board that `import _ ".../board/sim"` registers.
var DefaultConfig = Config{Ports: []PortConfig{
	{Name: "wan", Role: board.WAN, TAP: "gowrt-wan", MAC: gnet.MAC{0x02, 0x00, 0x67, 0x77, 0x72, 0x00}},
	{Name: "lan", Role: board.LAN, TAP: "gowrt-lan", MAC: gnet.MAC{0x02, 0x00, 0x67, 0x77, 0x72, 0x01}},
}}

// twinName, when set at link time (gowrt run -board ROUTER passes
// -ldflags -X github.com/gowrt/gowrt/board/sim.twinName=ROUTER), makes
// the registered board that router's sim twin instead of the default
// board: the router's own description driving the models, each socket a
// TAP device named TwinTAP(label).
var twinName string

// TwinTAP is the TAP device of a twin socket in gowrt run: "gowrt-lan1",
// "gowrt-wan".
func TwinTAP(label string) string { return "gowrt-" + label }

func init() {
	if twinName == "" {
		board.Register(New(DefaultConfig))
		return
	}
	board.Register(&linkedTwin{name: twinName})
}

// Board is a sim board. Its hardware is built by the first call to Ports.
type Board struct {
	cfg Config

	once  sync.Once
	err   error
	sys   *hwsim.System
	ports []*Port
	kick  chan struct{}
	stop  chan struct{}
	wg    sync.WaitGroup // the clock and the ports' cable goroutines
	close sync.Once
}

// Port is one simulated Ethernet port: the driver's NIC, the MAC and PHY
// models, and the TAP device that is its cable.
type Port struct {
	cfg  PortConfig
	b    *Board
	NIC  *arge.NIC
	MAC  *argesim.MAC
	PHY  *physim.PHY
	Dev  *tap.Dev // nil when the cable leads to the demo host or nowhere
	txq  chan []byte
	free chan []byte
	demo *wireNIC
}

// New returns a sim board; nothing is created until Ports.
func New(cfg Config) *Board {
	if cfg.Log == nil {
		cfg.Log = func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
	}
	return &Board{cfg: cfg, kick: make(chan struct{}, 1), stop: make(chan struct{})}
}

// Name implements board.Board.
func (b *Board) Name() string { return "sim" }

// Ports implements board.Board: it builds the models, opens the TAP devices
// and creates the drivers. It fails with tap.ErrPermission without root.
func (b *Board) Ports() ([]board.Port, error) {
	b.once.Do(func() { b.err = b.build() })
	if b.err != nil {
		return nil, b.err
	}
	var ps []board.Port
	for _, p := range b.ports {
		ps = append(ps, board.Port{Name: p.cfg.Name, Role: p.cfg.Role, NIC: p.NIC})
	}
	return ps, nil
}

// Port returns the named port (after Ports), for tests that pull cables.
func (b *Board) Port(name string) (*Port, error) {
	for _, p := range b.ports {
		if p.cfg.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("sim: no port %q", name)
}

// System returns the simulated machine (after Ports).
func (b *Board) System() *hwsim.System { return b.sys }

func (b *Board) build() error {
	if len(b.cfg.Ports) == 0 || len(b.cfg.Ports) > 2 {
		return fmt.Errorf("sim: %d ports (the AR9344 has two MACs)", len(b.cfg.Ports))
	}
	seed := b.cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	b.sys = hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: true})
	b.sys.OnMisuse(func(m hwsim.Misuse) { b.cfg.Log("sim: HARDWARE MISUSE (seed %d): %v", seed, m) })
	soc, err := ar71xxsim.New(b.sys, ar71xxsim.Config{Rev: revAR9344})
	if err != nil {
		return fmt.Errorf("sim: SoC model: %w", err)
	}
	s, err := ar71xx.Probe(soc.Regions())
	if err != nil {
		return fmt.Errorf("sim: SoC: %w", err)
	}
	cpu := b.sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 6})
	disp := intr.NewDispatcher(cpu, cpu)
	disp.OnError = func(line int, err error) { b.cfg.Log("sim: interrupt line %d: %v", line, err) }
	b.wg.Add(1)
	go b.clock()
	demo := false

	for unit, pc := range b.cfg.Ports {
		u := ar71xx.EthUnits[unit] // GE0, GE1: base, interrupt line, flush channel
		line := u.IRQ
		p := &Port{cfg: pc, b: b, txq: make(chan []byte, 256), free: make(chan []byte, 256)}
		for i := 0; i < cap(p.free); i++ {
			p.free <- make([]byte, argesim.MaxFrame)
		}
		unitN := unit
		p.MAC, err = argesim.New(b.sys, argesim.Config{Unit: unit, Info: soc.Info, IRQ: cpu, Line: line,
			DMA: soc.DDR.Channel(u.Flush), Clock: func(mbps int) bool { return soc.EthSpeedProgrammed(unitN, mbps) }})
		if err != nil {
			return fmt.Errorf("sim: %s MAC model: %w", pc.Name, err)
		}
		regs := p.MAC.Map(fmt.Sprintf("arge%d", unit))
		p.PHY = physim.New(0x004DD072, true)
		p.PHY.SetPartner(physim.GigabitPartner)
		p.MAC.AttachPHY(0, p.PHY)
		p.MAC.SetWire(argesim.WireFunc(p.send))
		p.Dev, err = tap.Open(pc.TAP)
		switch {
		case errors.Is(err, tap.ErrPermission) && pc.Role == board.LAN && !demo:
			b.cfg.Log("sim: %v", err)
			b.cfg.Log("sim: without root the LAN port %s is cabled to an in-process demo host at 192.168.1.100 instead of TAP %s; run as root to reach the router from Linux", pc.Name, pc.TAP)
			if err := b.startDemo(p); err != nil {
				return err
			}
			demo = true
		case errors.Is(err, tap.ErrPermission):
			b.cfg.Log("sim: port %s left unplugged (no TAP device without root)", pc.Name)
			p.PHY.SetPartner(physim.Partner{})
		case err != nil:
			return fmt.Errorf("sim: port %s: %w", pc.Name, err)
		case pc.Role == board.LAN:
			b.cfg.Log("sim: port %s is TAP device %s, created down; to reach the router from Linux: "+
				"ip link set %[2]s up && ip addr add 192.168.1.2/24 dev %[2]s (or move it into a network namespace)", pc.Name, pc.TAP)
		default:
			b.cfg.Log("sim: port %s is TAP device %s, created down (the WAN port: cable it to a network with a DHCP server, e.g. dnsmasq in a namespace, and the router routes the LAN to it through NAT)", pc.Name, pc.TAP)
		}
		mii := arge.NewMII(regs)
		ph, err := phy.New(mii, 0)
		if err != nil {
			return fmt.Errorf("sim: %s PHY: %w", pc.Name, err)
		}
		if err := ph.Reset(); err != nil {
			return fmt.Errorf("sim: %s PHY reset: %w", pc.Name, err)
		}
		if err := ph.StartAutoneg(phy.All); err != nil {
			return fmt.Errorf("sim: %s autonegotiation: %w", pc.Name, err)
		}
		cfg, err := argeport.Config(s, u, regs, b.sys.Mem)
		if err != nil {
			return fmt.Errorf("sim: %s: %w", pc.Name, err)
		}
		cfg.MII, cfg.MAC = mii, pc.MAC
		p.NIC, err = arge.NewNIC(cfg)
		if err != nil {
			return fmt.Errorf("sim: %s driver: %w", pc.Name, err)
		}
		p.NIC.PollInterval = 50 * time.Millisecond
		// The board follows the PHY (it raises no interrupt here) and
		// tells the NIC the link, for as long as the board runs.
		b.wg.Add(1)
		go func(name string) {
			defer b.wg.Done()
			phy.Follow(ph, p.NIC, linkPoll, b.stop, func(err error) { b.cfg.Log("sim: port %s: link: %v", name, err) })
		}(pc.Name)
		if err := disp.Register(line, "arge"+fmt.Sprint(unit), p.NIC.Interrupt); err != nil {
			return fmt.Errorf("sim: %s interrupt: %w", pc.Name, err)
		}
		if p.Dev != nil {
			b.wg.Add(2)
			go p.receive()
			go p.transmit()
		}
		b.ports = append(b.ports, p)
	}
	return nil
}

// Close stops the board: the hardware clock and the cable goroutines end
// and the TAP devices are closed. Stop the NICs (the router) first: the
// models stop answering. Close is idempotent.
func (b *Board) Close() error {
	b.close.Do(func() {
		close(b.stop)
		for _, p := range b.ports {
			if p.Dev != nil {
				_ = p.Dev.Close()
			}
		}
		b.wg.Wait()
	})
	return nil
}

// Kick tells the hardware clock there is work (a doorbell, a frame).
func (b *Board) Kick() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// clock runs the models (runClock).
func (b *Board) clock() {
	defer b.wg.Done()
	runClock(b.sys, b.kick, b.stop)
}

// runClock runs a board's models: in bursts while they make progress,
// otherwise when kicked, and at least every 200 µs (timers inside the
// models, the driver's register writes that start an engine), until stop
// is closed.
func runClock(sys *hwsim.System, kick, stop <-chan struct{}) {
	t := time.NewTicker(200 * time.Microsecond)
	defer t.Stop()
	for {
		if sys.Sched.Settle(64) > 0 {
			continue
		}
		select {
		case <-stop:
			return
		case <-kick:
		case <-t.C:
		}
	}
}

// send is the MAC model's wire (System lock held): copy the frame for the
// TAP writer, or hand it to the demo host.
func (p *Port) send(frame []byte) {
	if p.demo != nil {
		p.demo.fromMAC(frame)
		return
	}
	if p.Dev == nil {
		return // unplugged
	}
	var buf []byte
	select {
	case buf = <-p.free:
	default:
		return // the host side is not draining: the cable drops it
	}
	n := copy(buf, frame)
	p.txq <- buf[:n]
}

func (p *Port) transmit() {
	defer p.b.wg.Done()
	for {
		select {
		case f := <-p.txq:
			_, _ = p.Dev.Write(f)
			p.free <- f[:cap(f)]
		case <-p.b.stop:
			return
		}
	}
}

// receive reads the cable. A read error other than the device being
// closed (the TAP device vanished with its namespace, say) ends the
// cable after it is logged: retrying a dead device would spin a CPU.
func (p *Port) receive() {
	defer p.b.wg.Done()
	buf := make([]byte, argesim.MaxFrame)
	for {
		n, err := p.Dev.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				p.b.cfg.Log("sim: port %s: cable read: %v; port unplugged", p.cfg.Name, err)
			}
			return
		}
		p.deliver(buf[:n])
	}
}

// deliverTries and deliverWait bound how long a frame from the cable is
// held while the MAC model's receive FIFO is full: at least 20 ms (short
// sleeps overrun), far longer than the model needs to drain a FIFO the
// driver keeps up with.
const (
	deliverTries = 1000
	deliverWait  = 20 * time.Microsecond
)

// deliver puts a frame from the cable into the MAC model. A full receive
// FIFO is back-pressure: the frame is held and offered again (see the
// package documentation), and dropped (and counted by the model) only if
// the FIFO stays full. Every other refusal (a frame too long or too short
// for the MAC, no link) is final: the model has dropped and counted the
// frame, and the cable moves on to the next one at once.
func (p *Port) deliver(frame []byte) {
	defer p.b.Kick()
	for try := 0; try < deliverTries; try++ {
		if err := p.MAC.Offer(frame); !errors.Is(err, argesim.ErrFIFOFull) {
			return
		}
		p.b.Kick()
		time.Sleep(deliverWait)
	}
	_ = p.MAC.Deliver(frame)
}

// SetCarrier plugs (true) or pulls (false) the port's cable: the PHY model
// loses its link partner, and the Linux side of the TAP sees NO-CARRIER.
func (p *Port) SetCarrier(up bool) error {
	pt := physim.GigabitPartner
	if !up {
		pt = physim.Partner{}
	}
	p.b.sys.Do(func() { p.PHY.SetPartner(pt) })
	if p.Dev == nil {
		return nil
	}
	return p.Dev.SetCarrier(up)
}
