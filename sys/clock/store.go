package clock

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/sys/event"
)

// Store keeps the saved time across reboots (a flash partition or a config
// file; the board provides it).
type Store interface {
	Load() ([]byte, error)
	Save([]byte) error
}

// The saved-time record, 24 bytes, big-endian:
//
//	0  4  magic "GWTM"
//	4  1  version (1)
//	5  3  reserved, zero
//	8  8  seconds since 1970 (signed)
//	16 4  nanoseconds, < 1e9
//	20 4  CRC-32 (IEEE) of bytes 0..19
const (
	recordLen     = 24
	recordVersion = 1
	recordMagic   = "GWTM"
)

// Saved times outside [minSaved, maxSaved) are not times this firmware
// wrote: the record is rejected even with a good CRC.
var (
	minSaved = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	maxSaved = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Errors of Decode.
var (
	ErrNoRecord    = errors.New("clock: no saved time")
	ErrShort       = errors.New("clock: saved time record too short")
	ErrBadMagic    = errors.New("clock: saved time record has no GWTM magic")
	ErrVersion     = errors.New("clock: saved time record of an unknown version")
	ErrChecksum    = errors.New("clock: saved time record fails its CRC")
	ErrReserved    = errors.New("clock: saved time record has reserved bits set")
	ErrImplausible = errors.New("clock: saved time is out of range")
)

// Encode returns the record that saves t.
func Encode(t time.Time) []byte {
	b := make([]byte, recordLen)
	copy(b, recordMagic)
	b[4] = recordVersion
	binary.BigEndian.PutUint64(b[8:], uint64(t.Unix()))
	binary.BigEndian.PutUint32(b[16:], uint32(t.Nanosecond()))
	binary.BigEndian.PutUint32(b[20:], crc32.ChecksumIEEE(b[:20]))
	return b
}

// Decode parses a record written by Encode. Trailing bytes (an erased
// flash sector reads as 0xff after the record) are ignored.
func Decode(b []byte) (time.Time, error) {
	if len(b) < recordLen {
		return time.Time{}, ErrShort
	}
	if string(b[:4]) != recordMagic {
		return time.Time{}, ErrBadMagic
	}
	if b[4] != recordVersion {
		return time.Time{}, fmt.Errorf("%w %d", ErrVersion, b[4])
	}
	if crc32.ChecksumIEEE(b[:20]) != binary.BigEndian.Uint32(b[20:]) {
		return time.Time{}, ErrChecksum
	}
	if b[5]|b[6]|b[7] != 0 {
		return time.Time{}, ErrReserved
	}
	sec := int64(binary.BigEndian.Uint64(b[8:]))
	nsec := binary.BigEndian.Uint32(b[16:])
	if nsec >= 1e9 || sec < minSaved.Unix() || sec >= maxSaved.Unix() {
		return time.Time{}, ErrImplausible
	}
	return time.Unix(sec, int64(nsec)).UTC(), nil
}

// setter is a Clock that can also be set without claiming a sync.
type setter interface {
	Clock
	step(to time.Time, synced bool) error
}

// Restore sets c to the time saved in st if that is later than c's time,
// never backwards, and without marking c synced. It returns the saved time.
// A missing (ErrNoRecord) or corrupt record is returned as an error and
// changes nothing:
// boot goes on with the clock it has.
func (c *System) Restore(st Store) (time.Time, error) { return restore(c, st) }

func restore(c setter, st Store) (time.Time, error) {
	b, err := st.Load()
	if err != nil {
		return time.Time{}, fmt.Errorf("clock: loading the saved time: %w", err)
	}
	if len(b) == 0 {
		return time.Time{}, ErrNoRecord
	}
	saved, err := Decode(b)
	if err != nil {
		return time.Time{}, err
	}
	if saved.After(c.Now()) {
		if err := c.step(saved, false); err != nil {
			return saved, err
		}
	}
	return saved, nil
}

// DefaultSavePeriod is how often a Keeper saves a synced clock. NOR flash
// sectors are rated for at least 100,000 erase cycles; an hourly save is
// 8,760 a year, so even one sector without wear levelling lasts over ten
// years, while a reboot after a power cut starts at most an hour behind
// (SNTP corrects that on the first sync; the saved time only needs to be
// plausible: certificate validity, log stamps, DHCP lease bookkeeping).
const DefaultSavePeriod = time.Hour

// Keeper saves the clock to a Store: at the first sync, then every Period,
// and once more when Run returns (a clean shutdown or reboot).
type Keeper struct {
	Clock  Clock
	Store  Store
	Period time.Duration // DefaultSavePeriod if zero
	// Errorf reports a failed save (nil: not reported).
	Errorf func(format string, args ...any)

	saves, failures atomic.Uint64
}

// Saves returns how many saves succeeded and failed.
func (k *Keeper) Saves() (ok, failed uint64) { return k.saves.Load(), k.failures.Load() }

// Run saves until ctx ends. synced delivers each successful SNTP sync (the
// bus's Time topic); the first one is saved at once. Before a sync nothing
// is saved, so a router that never reached a time server does not wear
// the flash with a time that is merely the restored one plus its uptime.
func (k *Keeper) Run(ctx context.Context, synced <-chan event.TimeSynced) error {
	period := k.Period
	if period <= 0 {
		period = DefaultSavePeriod
	}
	var tick <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if k.Clock.Synced() {
				k.save()
			}
			return ctx.Err()
		case _, ok := <-synced:
			if !ok {
				synced = nil
				continue
			}
			if tick == nil { // the first sync: save now, then periodically
				k.save()
				t := time.NewTicker(period)
				defer t.Stop()
				tick = t.C
			}
		case <-tick:
			k.save()
		}
	}
}

func (k *Keeper) save() {
	now := k.Clock.Now()
	if now.Before(minSaved) {
		return
	}
	if err := k.Store.Save(Encode(now)); err != nil {
		k.failures.Add(1)
		if k.Errorf != nil {
			k.Errorf("clock: saving the time: %v", err)
		}
		return
	}
	k.saves.Add(1)
}
