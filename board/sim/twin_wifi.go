package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/ar9300/ar9300sim"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/wire"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/tap"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

// The twin's Wi-Fi. A board whose description has a radio on the WMAC
// gets the WMAC's model (ath/ar9300/ar9300sim) on a simulated radio
// medium (wlan/medium) running in real time; Radios runs wire.Radios, the
// bare-metal bring-up, so the real ath/ar9300 driver drives the model.
// On the same medium, TwinConfig.Stations are simulated stations
// (wlan/sta on a medium SimRadio) whose Ethernet side is a TAP device,
// like a socket's cable: Linux behind the TAP is a Wi-Fi client of the
// router's AP.
//
// The WMAC model has its own simulated machine (hwsim System, in the
// host's byte order, without the posted-write and eviction hazards the
// hostile tests use): its DMA memory is its own, and its interrupt line is
// serviced after every step of the medium's clock, as the board's IP2
// handler would.

// TwinStation is a simulated Wi-Fi client of the twin's AP.
type TwinStation struct {
	// TAP is the Ethernet side's TAP device ("" : none, the station
	// only associates).
	TAP string
	// MAC is the station's address; zero takes the TAP device's Linux
	// side address (so Linux's frames need no rewriting: a station
	// that is not in 4-address mode carries its own address only), or
	// 02:67:77:57:00:N without a TAP.
	MAC              gnet.MAC
	SSID, Passphrase string // no passphrase: an open network
}

// WifiStep is the twin medium's clock step (medium.Run in real time).
const WifiStep = time.Millisecond

// twinWifi is the twin's radio side.
type twinWifi struct {
	m      *medium.Medium
	sys    *hwsim.System
	irq    *hwsim.Controller
	model  *ar9300sim.MAC
	region *hwsim.Region

	mu      sync.Mutex // the medium: Run against the other callers
	handler func()     // the driver's interrupt handler (WMACInterrupt)

	stations []*WifiStation

	once   sync.Once
	radios []board.Radio
	err    error
}

// WifiStation is one of the twin's simulated stations.
type WifiStation struct {
	Station *sta.Station
	Radio   *medium.SimRadio
	Dev     *tap.Dev // nil without a TAP
	nic     *tap.NIC
}

// wmacLine is the WMAC's line on its machine's interrupt controller.
const wmacLine = 0

// hasWMAC reports whether b has a radio on the WMAC.
func hasWMAC(b *boardfile.Board) bool {
	for _, r := range b.Radios {
		if r.Bus == boardfile.WMAC {
			return true
		}
	}
	return false
}

// buildWifi builds the medium, the WMAC model and the stations.
func (t *Twin) buildWifi(seed uint64) error {
	if !hasWMAC(t.b) {
		if len(t.cfg.Stations) > 0 {
			return fmt.Errorf("sim: %s has no WMAC radio for stations", t.b.Name)
		}
		return nil
	}
	w := &twinWifi{}
	t.wifi = w // from here on, Close closes what was opened
	epoch := time.Now()
	var err error
	// 2.4 GHz: the WMACs of the described boards are their 2.4 GHz radios.
	if w.m, err = medium.New(medium.Config{Start: epoch, Seed: seed, Capture: t.cfg.WifiCapture, Step: WifiStep, PHY: airtime.TwoGHz(true)}); err != nil {
		return err
	}
	w.sys = hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: binary.NativeEndian.Uint16([]byte{1, 0}) != 1,
		NoPostedWrites: true, NoStaleReads: true, NoEviction: true, AgentRate: -1})
	w.sys.OnMisuse(func(m hwsim.Misuse) {
		t.misuses.Add(1)
		t.logf("WMAC HARDWARE MISUSE (seed %d): %v", seed, m)
	})
	w.irq = w.sys.NewController(hwsim.ControllerConfig{Name: "wmac-ip2", Lines: 1})
	w.model = ar9300sim.New(w.sys, ar9300sim.Config{IRQ: w.irq, Line: wmacLine, Epoch: epoch})
	w.region = w.model.Map("wmac")
	w.model.SetAir(w.m.Attach(wmacDevice{w}))
	for i, sc := range t.cfg.Stations {
		ws := &WifiStation{}
		var err error
		if sc.TAP != "" {
			if ws.Dev, err = tap.Open(sc.TAP); err != nil {
				return fmt.Errorf("sim: station %d: %w", i+1, err)
			}
			w.stations = append(w.stations, ws) // closed with the twin from here on
		}
		mac := sc.MAC
		if mac == (gnet.MAC{}) {
			mac = gnet.MAC{0x02, 0x67, 0x77, 0x57, 0, byte(i + 1)}
			if ws.Dev != nil {
				ifc, err := net.InterfaceByName(ws.Dev.Name())
				if err != nil || len(ifc.HardwareAddr) != 6 {
					return fmt.Errorf("sim: station %d: the address of %s: %v", i+1, sc.TAP, err)
				}
				mac = gnet.MAC(ifc.HardwareAddr)
			}
		}
		s, err := sta.New(sta.Config{Addr: wlan.MAC(mac), SSID: sc.SSID, Passphrase: sc.Passphrase, Open: sc.Passphrase == ""})
		if err != nil {
			return fmt.Errorf("sim: station %d: %w", i+1, err)
		}
		r, err := w.m.NewRadio(medium.RadioConfig{Addr: wlan.MAC(mac), Channel: radio.Channel{Number: 1}})
		if err != nil {
			return err
		}
		w.m.AddTicker(s)
		ws.Station, ws.Radio = s, r
		if ws.Dev != nil {
			ws.nic = tap.NewNIC(ws.Dev, mac)
			if err := wlantest.Cable(ws.nic, s.NIC()); err != nil {
				return fmt.Errorf("sim: station %d: %w", i+1, err)
			}
		} else {
			w.stations = append(w.stations, ws)
		}
		if err := s.Start(r, w.m.Now()); err != nil {
			return fmt.Errorf("sim: station %d: %w", i+1, err)
		}
	}
	t.wg.Add(1)
	go t.runAir()
	return nil
}

// runAir runs the medium in real time, one WifiStep per tick of the wall
// clock.
func (t *Twin) runAir() {
	defer t.wg.Done()
	tk := time.NewTicker(WifiStep)
	defer tk.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tk.C:
			t.wifi.mu.Lock()
			t.wifi.m.Run(WifiStep)
			t.wifi.mu.Unlock()
		}
	}
}

// wmacDevice is the WMAC model as a medium device: the chip's clock
// follows the medium's, and the driver's interrupt handler runs while the
// line is up, as the board's IP2 handler would.
type wmacDevice struct{ w *twinWifi }

func (d wmacDevice) Receive(frame []byte) { d.w.model.Receive(frame) }

func (d wmacDevice) Tick(now time.Time) {
	d.w.model.Tick(now)
	d.w.service()
}

// service lets the model's engines finish and runs the handler while
// the line is up (bounded: a line stuck up is the driver's bug, counted
// by the model, not a reason to spin).
func (w *twinWifi) service() {
	for i := 0; i < 16; i++ {
		w.sys.Sched.Settle(256)
		if w.irq.Pending()&(1<<wmacLine) == 0 || w.handler == nil {
			return
		}
		w.handler()
	}
}

// Radios implements board.Wireless: wire.Radios, the bare-metal radio
// bring-up, on the WMAC model.
func (t *Twin) Radios() ([]board.Radio, error) {
	if t.wifi == nil {
		return nil, nil
	}
	t.wifi.once.Do(func() { t.wifi.radios, t.wifi.err = wire.Radios(t.b, twinHW{t}, t.cfg.Base) })
	return t.wifi.radios, t.wifi.err
}

// Stations returns the simulated Wi-Fi stations.
func (t *Twin) Stations() []*WifiStation {
	if t.wifi == nil {
		return nil
	}
	return t.wifi.stations
}

// WMAC returns the WMAC's model (nil on a board without one).
func (t *Twin) WMAC() *ar9300sim.MAC {
	if t.wifi == nil {
		return nil
	}
	return t.wifi.model
}

// closeWifi closes the stations' TAP devices (the air goroutine stops
// with the twin's stop channel).
func (t *Twin) closeWifi() {
	if t.wifi == nil {
		return
	}
	for _, s := range t.wifi.stations {
		if s.nic != nil {
			s.nic.Stop()
		}
		if s.Dev != nil {
			_ = s.Dev.Close()
		}
	}
}

var _ board.Wireless = (*Twin)(nil)

// WMAC implements wire.WMACHardware: the model's registers and its
// machine's memory.
func (h twinHW) WMAC(u ar71xx.WMACUnit) (barrier.Space, busdma.Platform, error) {
	if h.t.wifi == nil {
		return nil, nil, fmt.Errorf("sim: %s: no WMAC modelled", h.t.b.Name)
	}
	return h.t.wifi.region, h.t.wifi.sys.Mem, nil
}

// WMACInterrupt implements wire.WMACHardware: the handler runs after each
// step of the medium while the model's line is up.
func (h twinHW) WMACInterrupt(u ar71xx.WMACUnit, name string, handler func()) error {
	if h.t.wifi == nil {
		return errors.New("sim: no WMAC modelled")
	}
	h.t.wifi.mu.Lock()
	defer h.t.wifi.mu.Unlock()
	h.t.wifi.handler = handler
	return nil
}
