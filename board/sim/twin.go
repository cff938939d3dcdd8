package sim

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/arge/argesim"
	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/arswitch/arswitchsim"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/boardflash"
	"github.com/gowrt/gowrt/board/ar71xx/wire"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/flash/spinor"
	"github.com/gowrt/gowrt/flash/spinor/spinorsim"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/mdio/phy"
	"github.com/gowrt/gowrt/mdio/phy/physim"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/tap"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/soc/ar71xx/ar71xxsim"
)

// TwinConfig configures a board's sim twin.
type TwinConfig struct {
	// TAPs cables the board's sockets (boardfile.Board.Jacks labels:
	// "lan1" … "lan4", "wan") to TAP devices by name. A socket without
	// one is unplugged.
	TAPs map[string]string
	// Base is the board's MAC address (the LAN's; the WAN's is Base+1
	// where a MAC carries only the WAN); zero picks 02:00:67:77:72:00.
	Base gnet.MAC
	// Seed drives the models' hazards; 0 picks one from the clock.
	Seed uint64
	// FlashImage is what the SPI flash holds at power-up (a previous
	// twin's Flash.Image(), for a reboot); nil is an erased chip.
	FlashImage []byte
	// Log receives model misuse reports (default: stderr).
	Log func(format string, a ...any)
	// USB, if set, names the TAP device that is the Ethernet side of an
	// AX88179 plugged into the board's first USB port (twin_usb.go).
	USB string
}

// defaultBase is a locally administered address (bit 1 of the first byte).
var defaultBase = gnet.MAC{0x02, 0x00, 0x67, 0x77, 0x72, 0x00}

// Twin is a router board from board/ar71xx/boardfile run as hardware
// models: the SoC (ar71xxsim with the board's REV_ID), an arge MAC model
// per Ethernet unit the board uses, the switch model of the board's chip
// answering on the MDIO bus of the MAC the description names, PHY models
// for MACs with their own PHY, and TAP devices as the cables of the
// board's sockets. Frames between two switch ports cross the switch model
// alone, as on the board; frames to the router cross the switch's CPU
// port and the MAC model.
//
// Its Ports runs wire.Ports, the bare-metal board's bring-up, against the
// models (Hardware), so a twin test is a test of that code. The AR9331's
// built-in switch (Carambola2) is modelled as the AR7240's, which it is
// register-compatible with as far as arswitch drives it (arswitch
// identifies both as ChipAR7240).
//
// A Twin implements board.Board but registers nothing: tests build one.
type Twin struct {
	b   *boardfile.Board
	cfg TwinConfig

	sys     *hwsim.System
	socM    *ar71xxsim.SoC
	soc     *ar71xx.SoC
	disp    *intr.Dispatcher
	macs    map[int]*argesim.MAC
	regions map[int]*hwsim.Region
	// Switch is the switch model (nil if the board has none).
	Switch *arswitchsim.Switch
	jacks  []*TwinJack
	// Flash is the SPI NOR model with the board's flash size, behind the
	// SoC's SPI controller: the board's storage and sysupgrade target,
	// through the same driver and layout code as on the router.
	Flash *spinorsim.Flash

	flashOnce sync.Once
	bflash    *boardflash.Flash
	flashErr  error

	misuses atomic.Uint64
	usb     twinUSB // twin_usb.go

	once  sync.Once
	wired *wire.Wired
	err   error

	kick  chan struct{}
	stop  chan struct{}
	wg    sync.WaitGroup
	close sync.Once
}

// TwinJack is one of the board's sockets in the twin.
type TwinJack struct {
	boardfile.Jack
	TAP string   // "" when unplugged
	Dev *tap.Dev // nil when unplugged
	t   *Twin
	up  atomic.Bool // cable plugged
	phy *physim.PHY // a MAC's own PHY modelled on its own (not a switch's)
	out *pipe       // frames to the TAP device
}

// chipModel maps the description's switch to the model's chip.
func chipModel(c arswitch.ChipID) (arswitchsim.Chip, error) {
	switch c {
	case arswitch.ChipAR8216:
		return arswitchsim.AR8216, nil
	case arswitch.ChipAR8316:
		return arswitchsim.AR8316, nil
	case arswitch.ChipAR8327:
		return arswitchsim.AR8327, nil
	case arswitch.ChipAR8337:
		return arswitchsim.AR8337, nil
	case arswitch.ChipAR7240:
		return arswitchsim.AR7240, nil
	case arswitch.ChipAR934x:
		return arswitchsim.AR934x, nil
	}
	return 0, fmt.Errorf("sim: no model of switch %v", c)
}

// NewTwin builds b's hardware models and opens the TAP devices cfg names
// (which needs root). The router's ports come from Ports.
func NewTwin(b *boardfile.Board, cfg TwinConfig) (*Twin, error) {
	if b == nil {
		return nil, errors.New("sim: nil board")
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
	}
	if cfg.Base == (gnet.MAC{}) {
		cfg.Base = defaultBase
	}
	t := &Twin{b: b, cfg: cfg, macs: map[int]*argesim.MAC{}, regions: map[int]*hwsim.Region{},
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	if err := t.build(); err != nil {
		_ = t.Close()
		return nil, err
	}
	return t, nil
}

func (t *Twin) logf(format string, a ...any) {
	t.cfg.Log("sim %s: "+format, append([]any{t.b.Name}, a...)...)
}

func (t *Twin) build() error {
	b := t.b
	known := map[string]bool{}
	for _, j := range b.Jacks() {
		known[j.Label] = true
	}
	for l := range t.cfg.TAPs {
		if !known[l] {
			return fmt.Errorf("sim: %s has no socket %q", b.Name, l)
		}
	}
	seed := t.cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	// The USB stack fills mapped buffers outside the System lock, so
	// spontaneous eviction would be a data race (hwsim.Config.NoEviction).
	t.sys = hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: true, NoEviction: t.cfg.USB != ""})
	t.sys.OnMisuse(func(m hwsim.Misuse) {
		t.misuses.Add(1)
		t.logf("HARDWARE MISUSE (seed %d): %v", seed, m)
	})
	var err error
	t.socM, err = ar71xxsim.New(t.sys, ar71xxsim.Config{Rev: b.Rev})
	if err != nil {
		return fmt.Errorf("sim: %s: SoC model: %w", b.Name, err)
	}
	capByte := byte(0)
	for 1<<capByte < b.Flash.Size {
		capByte++
	}
	if t.cfg.FlashImage != nil && int64(len(t.cfg.FlashImage)) != b.Flash.Size {
		return fmt.Errorf("sim: %s: flash image of %d bytes for a %d-byte flash", b.Name, len(t.cfg.FlashImage), b.Flash.Size)
	}
	// A Winbond W25Q-style JEDEC ID of the board's size (the TP-Link
	// boards' usual part; the model takes any).
	t.Flash = spinorsim.New(t.sys, spinorsim.Config{JEDEC: [3]byte{0xef, 0x40, capByte}}, t.cfg.FlashImage)
	cpu := t.sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 6})
	t.disp = intr.NewDispatcher(cpu, cpu)
	t.disp.OnError = func(line int, err error) { t.logf("interrupt line %d: %v", line, err) }
	t.wg.Add(1)
	go t.clock()

	for _, e := range b.Eth {
		u := ar71xx.EthUnits[e.Unit]
		unit := e.Unit
		m, err := argesim.New(t.sys, argesim.Config{Unit: e.Unit, Info: t.socM.Info, IRQ: cpu, Line: u.IRQ,
			DMA: t.socM.DDR.Channel(u.Flush), Clock: func(mbps int) bool { return t.socM.EthSpeedProgrammed(unit, mbps) }})
		if err != nil {
			return fmt.Errorf("sim: %s: GE%d model: %w", b.Name, e.Unit, err)
		}
		t.macs[e.Unit] = m
		t.regions[e.Unit] = m.Map(fmt.Sprintf("arge%d", e.Unit))
	}
	builtIn := false
	if sw := b.Switch; sw != nil {
		chip, err := chipModel(sw.Chip)
		if err != nil {
			return err
		}
		builtIn = sw.Chip == arswitch.ChipAR7240 || sw.Chip == arswitch.ChipAR934x
		t.Switch = arswitchsim.New(chip, arswitchsim.Options{})
		t.macs[sw.MDIOUnit].AttachMDIO(t.Switch)
	}

	// Sockets and their cables.
	byPort := map[string]*TwinJack{}
	for _, bj := range b.Jacks() {
		j := &TwinJack{Jack: bj, TAP: t.cfg.TAPs[bj.Label], t: t}
		t.jacks = append(t.jacks, j)
		if bj.SwitchPort < 0 {
			byPort[bj.Port] = j
		} else if bj.SwitchPort >= t.Switch.NumPorts() {
			return fmt.Errorf("sim: %s: socket %s on switch port %d; the %v has %d", b.Name, bj.Label, bj.SwitchPort, t.Switch.Chip(), t.Switch.NumPorts())
		}
		if j.TAP == "" {
			continue
		}
		if j.Dev, err = tap.Open(j.TAP); err != nil {
			return fmt.Errorf("sim: %s: socket %s: %w", b.Name, bj.Label, err)
		}
		j.up.Store(true)
		j.out = t.newPipe(func(f []byte) { _, _ = j.Dev.Write(f) })
		if bj.SwitchPort >= 0 {
			sp := bj.SwitchPort
			t.Switch.SetEgress(sp, func(f []byte) { j.out.put(f) })
			t.Switch.SetLink(sp, true)
			t.readTAP(j, func(f []byte) { t.Switch.Inject(sp, f); t.Kick() })
		}
	}

	// Each MAC's other end: the switch's CPU port, or its own PHY and
	// socket.
	for _, e := range b.Eth {
		m := t.macs[e.Unit]
		if e.SwitchPort >= 0 {
			cpuPort := e.SwitchPort
			toSwitch := t.newPipe(func(f []byte) { t.Switch.Inject(cpuPort, f) })
			toMAC := t.newPipe(func(f []byte) { t.deliver(m, f) })
			m.SetWire(argesim.WireFunc(toSwitch.put))
			t.Switch.SetEgress(cpuPort, toMAC.put)
			m.SetLinkSource(func() phy.Link { return phy.Link{Up: true, Speed: 1000, FullDuplex: true} })
			continue
		}
		var j *TwinJack
		for _, p := range b.Ports {
			if p.Unit == e.Unit {
				j = byPort[p.Name]
			}
		}
		if j == nil {
			return fmt.Errorf("sim: %s: GE%d has its own PHY but no port", b.Name, e.Unit)
		}
		switchPHY := e.PHYViaSwitch || (b.Switch != nil && !builtIn && e.PHYUnit == b.Switch.MDIOUnit && e.PHY <= 4)
		if switchPHY {
			// The switch's own PHY (its link is the cable of the
			// switch port the PHY would serve: PHY n ↔ port n+1).
			if t.Switch == nil {
				return fmt.Errorf("sim: %s: GE%d's PHY is the switch's, and there is none", b.Name, e.Unit)
			}
			t.Switch.SetLink(e.PHY+1, j.up.Load())
			m.SetLinkSource(func() phy.Link {
				if !j.up.Load() {
					return phy.Link{}
				}
				return phy.Link{Up: true, Speed: 1000, FullDuplex: true}
			})
		} else {
			bus, ok := t.macs[e.PHYUnit]
			if !ok {
				return fmt.Errorf("sim: %s: GE%d's PHY is on GE%d's MDIO, which is not used", b.Name, e.Unit, e.PHYUnit)
			}
			j.phy = physim.New(0x004DD072, true)
			if j.up.Load() {
				j.phy.SetPartner(physim.GigabitPartner)
			}
			bus.AttachPHY(e.PHY, j.phy)
			m.SetLinkSource(j.phy.Current)
		}
		if j.Dev != nil {
			m.SetWire(argesim.WireFunc(j.out.put))
			t.readTAP(j, func(f []byte) { t.deliver(m, f) })
		}
	}
	return t.buildUSB(cpu)
}

// Ports implements board.Board: wire.Ports, the bare-metal bring-up, on
// the models.
func (t *Twin) Ports() ([]board.Port, error) {
	t.once.Do(func() {
		if t.wired, t.err = wire.Ports(t.b, t.Hardware(), t.cfg.Base); t.err == nil {
			t.wired.Ports = append(t.wired.Ports, t.startUSB()...) // twin_usb.go
		}
	})
	if t.err != nil {
		return nil, t.err
	}
	return t.wired.Ports, nil
}

// Name implements board.Board: the board's name.
func (t *Twin) Name() string { return t.b.Name }

// Wired returns what Ports brought up (nil before).
func (t *Twin) Wired() *wire.Wired { return t.wired }

// Jacks returns the sockets.
func (t *Twin) Jacks() []*TwinJack { return t.jacks }

// Jack returns the socket labelled label.
func (t *Twin) Jack(label string) (*TwinJack, error) {
	for _, j := range t.jacks {
		if j.Label == label {
			return j, nil
		}
	}
	return nil, fmt.Errorf("sim: %s has no socket %q", t.b.Name, label)
}

// MAC returns the model of Ethernet unit.
func (t *Twin) MAC(unit int) *argesim.MAC { return t.macs[unit] }

// System returns the simulated machine.
func (t *Twin) System() *hwsim.System { return t.sys }

// Misuses returns how many hardware misuses the hwsim models reported.
func (t *Twin) Misuses() uint64 { return t.misuses.Load() }

// Kick tells the hardware clock there is work.
func (t *Twin) Kick() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Close stops the wiring's link polling, the hardware clock and the
// cables, and closes the TAP devices. Stop the router first.
func (t *Twin) Close() error {
	t.close.Do(func() {
		if t.wired != nil {
			_ = t.wired.Close()
		}
		t.closeUSB()
		close(t.stop)
		for _, j := range t.jacks {
			if j.Dev != nil {
				_ = j.Dev.Close()
			}
		}
		t.wg.Wait()
	})
	return nil
}

func (t *Twin) clock() {
	defer t.wg.Done()
	runClock(t.sys, t.kick, t.stop)
}

// SetCarrier plugs (true) or pulls (false) the socket's cable.
func (j *TwinJack) SetCarrier(up bool) error {
	j.up.Store(up)
	t := j.t
	switch {
	case j.phy != nil:
		pt := physim.GigabitPartner
		if !up {
			pt = physim.Partner{}
		}
		t.sys.Do(func() { j.phy.SetPartner(pt) })
	case j.SwitchPort >= 0:
		t.Switch.SetLink(j.SwitchPort, up)
	default: // a switch's PHY serving a MAC directly
		if e, err := t.b.EthUnit(j.Unit); err == nil && e.PHY >= 0 {
			t.Switch.SetLink(e.PHY+1, up)
		}
	}
	if j.Dev == nil {
		return nil
	}
	return j.Dev.SetCarrier(up)
}

// readTAP starts the socket's reader: each frame from the TAP device goes
// to in.
func (t *Twin) readTAP(j *TwinJack, in func([]byte)) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		buf := make([]byte, argesim.MaxFrame)
		for {
			n, err := j.Dev.Read(buf)
			if err != nil {
				if !errors.Is(err, os.ErrClosed) {
					t.logf("socket %s: cable read: %v; unplugged", j.Label, err)
				}
				return
			}
			in(buf[:n])
		}
	}()
}

// deliver puts a frame into a MAC model, holding it while the receive
// FIFO is full (see the package documentation).
func (t *Twin) deliver(m *argesim.MAC, frame []byte) {
	defer t.Kick()
	for try := 0; try < deliverTries; try++ {
		if err := m.Offer(frame); !errors.Is(err, argesim.ErrFIFOFull) {
			return
		}
		t.Kick()
		time.Sleep(deliverWait)
	}
	_ = m.Deliver(frame)
}

// pipe is one direction of a cable between two models (or a model and a
// TAP device): put copies a frame in without blocking, under whatever
// lock the sending model holds, and a goroutine hands it to out with no
// model lock held. A model's lock is never held while another model's is
// taken, so the MAC models (System lock) and the switch model (its own
// lock) cannot deadlock. A frame that finds the pipe full is dropped, as
// a cable whose far end does not keep up.
type pipe struct {
	q, free chan []byte
	out     func([]byte)
}

const pipeDepth = 256

func (t *Twin) newPipe(out func([]byte)) *pipe {
	p := &pipe{q: make(chan []byte, pipeDepth), free: make(chan []byte, pipeDepth), out: out}
	for i := 0; i < pipeDepth; i++ {
		p.free <- make([]byte, argesim.MaxFrame)
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for {
			select {
			case f := <-p.q:
				p.out(f)
				p.free <- f[:cap(f)]
			case <-t.stop:
				return
			}
		}
	}()
	return p
}

func (p *pipe) put(frame []byte) {
	select {
	case buf := <-p.free:
		p.q <- buf[:copy(buf, frame)]
	default:
	}
}

// openFlash probes the SPI flash model through the spinor driver and lays
// the board's partitions over it, once.
func (t *Twin) openFlash() (*boardflash.Flash, error) {
	t.flashOnce.Do(func() {
		nor, err := spinor.New(spinor.Config{Regs: t.Flash.MapRegs("spi"), Mem: t.Flash.MapWindow("flash"), BigEndian: true})
		if err != nil {
			t.flashErr = fmt.Errorf("sim: %s: SPI flash: %w", t.b.Name, err)
			return
		}
		t.bflash, t.flashErr = boardflash.Open(t.b, nor, t.logf)
	})
	return t.bflash, t.flashErr
}

// Store implements board.Storage on the flash model's config partition.
func (t *Twin) Store(name string) (board.Store, error) {
	f, err := t.openFlash()
	if err != nil {
		return nil, err
	}
	return f.Store(name)
}

// FirmwareFlash implements board.Upgradable on the flash model.
func (t *Twin) FirmwareFlash() (board.FirmwareFlash, error) {
	f, err := t.openFlash()
	if err != nil {
		return board.FirmwareFlash{}, err
	}
	return f.FirmwareFlash()
}

var (
	_ board.Storage    = (*Twin)(nil)
	_ board.Upgradable = (*Twin)(nil)
)

// Hardware returns the twin's wire.Hardware: the models' register
// windows, the simulated memory for DMA, the interrupt dispatcher, and a
// Sleep that advances the switch model's virtual clock.
func (t *Twin) Hardware() wire.Hardware { return twinHW{t} }

type twinHW struct{ t *Twin }

func (h twinHW) SoC() (*ar71xx.SoC, error) {
	if h.t.soc == nil {
		s, err := ar71xx.Probe(h.t.socM.Regions())
		if err != nil {
			return nil, err
		}
		h.t.soc = s
	}
	return h.t.soc, nil
}

func (h twinHW) MAC(u ar71xx.EthUnit) (barrier.Space, error) {
	r, ok := h.t.regions[u.Unit]
	if !ok {
		return nil, fmt.Errorf("sim: %s: GE%d is not modelled (the board does not use it)", h.t.b.Name, u.Unit)
	}
	return r, nil
}

func (h twinHW) DMA() busdma.Platform { return h.t.sys.Mem }

func (h twinHW) Interrupt(u ar71xx.EthUnit, name string, handler func()) error {
	return h.t.disp.Register(u.IRQ, name, handler)
}

// Sleep advances the switch model's clock (its page settle and busy
// times are virtual) and yields: the MAC models run on their own clock.
func (h twinHW) Sleep(d time.Duration) {
	if h.t.Switch != nil {
		h.t.Switch.Advance(d)
	}
	runtime.Gosched()
}
