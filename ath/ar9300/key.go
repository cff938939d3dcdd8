package ar9300

import (
	"encoding/binary"
	"fmt"

	"github.com/gowrt/gowrt/wlan/radio"
)

// keySlot is the driver's side of a key-cache entry: the transmit PN the
// driver writes into CCMP headers.
type keySlot struct {
	used  bool
	keyID uint8
	pn    uint64
}

// Slots implements radio.KeyCache.
func (d *Driver) Slots() int { return keySlots }

// Install implements radio.KeyCache: a CCMP-128 key for frames from or to
// addr. Group keys (addr broadcast) go in the slot of their key ID (1..3),
// where the hardware looks them up; pairwise keys in slots 4..127. pn is
// the next transmit PN.
func (d *Driver) Install(slot int, addr [6]byte, keyID uint8, tk [16]byte, pn uint64) error {
	if slot < 0 || slot >= keySlots {
		return radio.ErrNoSlot
	}
	group := addr[0]&1 != 0
	switch {
	case group && (keyID < 1 || keyID > 3 || slot != int(keyID)):
		return fmt.Errorf("%w: group key %d must use slot %d (got %d)", ErrKey, keyID, keyID, slot)
	case !group && (slot < groupKeySlots || keyID != 0):
		return fmt.Errorf("%w: pairwise key in slot %d with key ID %d (slots %d.., ID 0)", ErrKey, slot, keyID, groupKeySlots)
	}
	if err := d.hold(); err != nil {
		return err
	}
	defer d.release()
	base := uint32(regKeyTable + keyEntrySize*slot)
	w := d.r.Write32
	// Key words (drivers/net/wireless/ath/key.c ath_hw_set_keycache_entry):
	// 32, 16, 32, 16, 32 bits of the key, little-endian.
	w(base+0x00, binary.LittleEndian.Uint32(tk[0:]))
	w(base+0x04, uint32(binary.LittleEndian.Uint16(tk[4:])))
	w(base+0x08, binary.LittleEndian.Uint32(tk[6:]))
	w(base+0x0c, uint32(binary.LittleEndian.Uint16(tk[10:])))
	w(base+0x10, binary.LittleEndian.Uint32(tk[12:]))
	w(base+keyOffType, keyTypeCCM)
	// The address is written shifted right by one bit (ath_hw_keysetmac).
	lo := binary.LittleEndian.Uint32(addr[0:])
	hi := uint32(binary.LittleEndian.Uint16(addr[4:]))
	lo = lo>>1 | (hi&1)<<31
	hi >>= 1
	w(base+keyOffMAC0, lo)
	w(base+keyOffMAC1, hi|keyValid)
	d.r.Barrier()
	d.keyMu.Lock()
	d.keys[slot] = keySlot{used: true, keyID: keyID, pn: pn - 1}
	if pn == 0 {
		d.keys[slot].pn = 0
	}
	d.keyMu.Unlock()
	return nil
}

// Clear implements radio.KeyCache (ath_hw_keyreset: key words zero, type
// CLR, address words zero).
func (d *Driver) Clear(slot int) error {
	if slot < 0 || slot >= keySlots {
		return radio.ErrNoSlot
	}
	if err := d.hold(); err != nil {
		return err
	}
	defer d.release()
	base := uint32(regKeyTable + keyEntrySize*slot)
	for off := uint32(0); off < 0x14; off += 4 {
		d.r.Write32(base+off, 0)
	}
	d.r.Write32(base+keyOffType, keyTypeClear)
	d.r.Write32(base+keyOffMAC0, 0)
	d.r.Write32(base+keyOffMAC1, 0)
	d.r.Barrier()
	d.keyMu.Lock()
	d.keys[slot] = keySlot{}
	d.keyMu.Unlock()
	return nil
}
