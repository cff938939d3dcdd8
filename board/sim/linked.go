package sim

import (
	"fmt"
	"os"
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
		l.twin, l.err = NewTwin(b, TwinConfig{TAPs: taps})
		if l.err != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "sim: %s (%s) as its sim twin: switch and MAC models driven by its board file\n", b.Model, b.Name)
		for _, j := range b.Jacks() {
			fmt.Fprintf(os.Stderr, "sim: socket %-5s is TAP device %s, created down\n", j.Label, taps[j.Label])
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
