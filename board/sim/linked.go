package sim

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
)

// linkedTwin is the board registered when a router name is linked in
// (twinName): its twin is built by the first call that needs hardware,
// with every socket cabled to a TAP device (TwinTAP). Its flash is the
// SPI flash model in RAM: the configuration lasts as long as the process.
type linkedTwin struct {
	name string

	once sync.Once
	twin *Twin
	err  error
}

func (l *linkedTwin) Name() string { return l.name }

func (l *linkedTwin) get() (*Twin, error) {
	l.once.Do(func() {
		b, err := boardfile.Lookup(l.name)
		if err != nil {
			l.err = fmt.Errorf("sim: %w", err)
			return
		}
		taps := map[string]string{}
		for _, j := range b.Jacks() {
			taps[j.Label] = TwinTAP(j.Label)
		}
		cfg := TwinConfig{TAPs: taps}
		if hasWMAC(b) {
			cfg.Stations = linkedStations()
		}
		l.twin, l.err = NewTwin(b, cfg)
		if l.err != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "sim: %s (%s) as its sim twin: switch and MAC models driven by its board file\n", b.Model, b.Name)
		for _, j := range b.Jacks() {
			fmt.Fprintf(os.Stderr, "sim: socket %-5s is TAP device %s, created down\n", j.Label, taps[j.Label])
		}
		for i, s := range cfg.Stations {
			fmt.Fprintf(os.Stderr, "sim: Wi-Fi station %d (SSID %q) is TAP device %s, created down\n", i+1, s.SSID, s.TAP)
		}
	})
	return l.twin, l.err
}

// Ports implements board.Board.
func (l *linkedTwin) Ports() ([]board.Port, error) {
	t, err := l.get()
	if err != nil {
		return nil, err
	}
	return t.Ports()
}

// Radios implements board.Wireless: the twin's WMAC (none on boards
// without one).
func (l *linkedTwin) Radios() ([]board.Radio, error) {
	t, err := l.get()
	if err != nil {
		return nil, err
	}
	return t.Radios()
}

// Store implements board.Storage on the twin's flash model.
func (l *linkedTwin) Store(name string) (board.Store, error) {
	t, err := l.get()
	if err != nil {
		return nil, err
	}
	return t.Store(name)
}

// FirmwareFlash implements board.Upgradable on the twin's flash model.
func (l *linkedTwin) FirmwareFlash() (board.FirmwareFlash, error) {
	t, err := l.get()
	if err != nil {
		return board.FirmwareFlash{}, err
	}
	return t.FirmwareFlash()
}

// Environment of gowrt run -board ROUTER for the simulated Wi-Fi stations
// of a router with a WMAC: how many (default 1), and the network they
// join, which must match the router's wireless configuration (the
// default configuration's AP is open, SSID gowrt, and disabled: enable it
// with uci set wireless.radio0.disabled=0 and commit).
const (
	EnvStations   = "GOWRT_WIFI_STATIONS"
	EnvSSID       = "GOWRT_WIFI_SSID"
	EnvPassphrase = "GOWRT_WIFI_PASSPHRASE"
)

// StationTAP is the TAP device of Wi-Fi station i (from 1) in gowrt run:
// "gowrt-sta1".
func StationTAP(i int) string { return fmt.Sprintf("gowrt-sta%d", i) }

// maxLinkedStations bounds GOWRT_WIFI_STATIONS.
const maxLinkedStations = 8

func linkedStations() []TwinStation {
	n := 1
	if v := os.Getenv(EnvStations); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 0 || k > maxLinkedStations {
			fmt.Fprintf(os.Stderr, "sim: %s=%q: want 0..%d; using 1\n", EnvStations, v, maxLinkedStations)
		} else {
			n = k
		}
	}
	ssid := os.Getenv(EnvSSID)
	if ssid == "" {
		ssid = "gowrt"
	}
	var out []TwinStation
	for i := 1; i <= n; i++ {
		out = append(out, TwinStation{TAP: StationTAP(i), SSID: ssid, Passphrase: os.Getenv(EnvPassphrase)})
	}
	return out
}
