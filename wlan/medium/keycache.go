package medium

import (
	"encoding/binary"
	"errors"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/radio"
)

// KeySlots is the number of slots of a simulated radio's key cache (the
// AR9300 key cache has 128).
const KeySlots = 128

// extIV is the Ext IV bit in octet 3 of the CCMP header (802.11-2016
// 12.5.3.2, Figure 12-16): set in every CCMP header, so a placeholder
// with it set already carries a PN.
const extIV = 0x20

var errKeyID = errors.New("medium: key ID out of range")

// keyCache is the simulated radio's "hardware" crypto: CCMP-128 slots
// looked up by transmitter address (pairwise) or key ID (group), as the
// Atheros key cache does. It lives under the medium's lock.
type keyCache struct {
	slots [KeySlots]keySlot
}

type keySlot struct {
	used  bool
	addr  wlan.MAC
	keyID uint8
	key   *ccmp.Key
}

// simKeyCache is the radio.KeyCache view of a SimRadio's cache.
type simKeyCache struct{ r *SimRadio }

func (c simKeyCache) Slots() int { return KeySlots }

func (c simKeyCache) Install(slot int, addr [6]byte, keyID uint8, tk [16]byte, pn uint64) error {
	if slot < 0 || slot >= KeySlots {
		return radio.ErrNoSlot
	}
	if keyID > 3 {
		return errKeyID
	}
	k, err := ccmp.NewKey(tk[:], int(keyID))
	if err != nil {
		return err
	}
	if pn > 0 {
		k.SetTxPN(pn - 1)
	}
	m := c.r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	c.r.keys.slots[slot] = keySlot{used: true, addr: addr, keyID: keyID, key: k}
	return nil
}

func (c simKeyCache) Clear(slot int) error {
	if slot < 0 || slot >= KeySlots {
		return radio.ErrNoSlot
	}
	m := c.r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	c.r.keys.slots[slot] = keySlot{}
	return nil
}

// encrypt protects mpdu (Protected bit set, CCMP header and MIC
// placeholders around the plaintext body) with slot's key into dst and
// returns the air frame. The PN comes from the placeholder when it
// already carries one (a software retransmission of an MPDU this radio
// encrypted before: the receiver's replay check after reordering needs
// the same PN), otherwise from the slot, and is then written into the
// placeholder.
func (c *keyCache) encrypt(dst []byte, slot int, mpdu []byte) ([]byte, error) {
	if slot < 0 || slot >= KeySlots || !c.slots[slot].used {
		return nil, radio.ErrNoSlot
	}
	k := c.slots[slot].key
	hl := wlan.HeaderLen(wlan.FrameControl(binary.LittleEndian.Uint16(mpdu)))
	if hl == 0 || len(mpdu) < hl+ccmp.Overhead {
		return nil, ccmp.ErrShort
	}
	body := mpdu[hl+ccmp.HeaderLen : len(mpdu)-ccmp.MICLen]
	dst = append(append(dst[:0], mpdu[:hl]...), body...)
	ph := mpdu[hl : hl+ccmp.HeaderLen]
	var out []byte
	var err error
	if ph[3]&extIV != 0 {
		pn := uint64(ph[0]) | uint64(ph[1])<<8 | uint64(ph[4])<<16 | uint64(ph[5])<<24 |
			uint64(ph[6])<<32 | uint64(ph[7])<<40
		out, err = k.EncapPN(dst, pn)
	} else {
		out, err = k.Encap(dst)
		if err == nil {
			copy(ph, out[hl:hl+ccmp.HeaderLen])
		}
	}
	return out, err
}

// decrypt finds the slot for a protected frame and decrypts it into dst
// the way the radio hands it up (radio.RxStatus.Decrypted): plaintext
// body, Protected bit and CCMP header kept, MIC removed. found is false
// when no slot matches (the frame goes up as received).
func (c *keyCache) decrypt(dst, frame []byte) (out []byte, found bool, err error) {
	h, perr := wlan.ParseHeader(frame)
	if perr != nil {
		return nil, false, nil
	}
	kid, perr := ccmp.PeekKeyID(frame)
	if perr != nil {
		return nil, false, nil
	}
	var k *ccmp.Key
	group := h.Addr1[0]&1 != 0
	for i := range c.slots {
		s := &c.slots[i]
		if !s.used || int(s.keyID) != kid {
			continue
		}
		if (group && s.addr == wlan.Broadcast) || (!group && s.addr == h.Addr2) {
			k = s.key
			break
		}
	}
	if k == nil {
		return nil, false, nil
	}
	hl := wlan.HeaderLen(h.FC)
	var saved [ccmp.HeaderLen]byte
	copy(saved[:], frame[hl:])
	buf := append(dst[:0], frame...)
	// The hardware checks the MIC only; the MAC layer checks the PN
	// after reordering, so the key's replay window is reset each time.
	k.SetRxPN(0)
	pt, err := k.Decap(buf)
	if err != nil {
		return nil, true, err
	}
	n := len(pt)
	buf = buf[:n+ccmp.HeaderLen]
	copy(buf[hl+ccmp.HeaderLen:], buf[hl:n])
	copy(buf[hl:], saved[:])
	buf[1] |= 0x40 // Protected Frame bit (802.11-2016 9.2.4.1.9)
	return buf, true, nil
}
