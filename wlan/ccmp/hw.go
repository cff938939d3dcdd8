package ccmp

import "math"

// AcceptDecrypted finishes receiving a frame a radio's key cache already
// decrypted and authenticated (radio.RxStatus.Decrypted): the Protected
// bit is still set and the CCMP header still follows the MAC header, the
// MIC is gone. Hardware checks the MIC but keeps no replay counters (the
// Atheros key cache does not; mac80211 checks the PN of such frames in
// software, ieee80211_crypto_ccmp_decrypt with RX_FLAG_DECRYPTED), so
// this checks the frame's key ID and its PN against the key's receive
// counter for the frame's TID, advances the counter, and removes the
// CCMP header in place: it returns the plaintext MPDU, a prefix of frame,
// with the Protected bit cleared. Replays are counted in Stats.Replays.
func (k *Key) AcceptDecrypted(frame []byte) ([]byte, error) {
	h, pn, err := k.checkRx(frame, 0, math.MaxInt)
	if err != nil {
		return nil, err
	}
	n := len(frame)
	k.rxPN[h.counter] = pn
	copy(frame[h.len:], frame[h.len+HeaderLen:n])
	frame[1] &^= fcProtected
	k.Stats.Decrypted.Add(1)
	return frame[:n-HeaderLen], nil
}

// ReadPN returns the packet number in the CCMP header of a protected
// frame, for a radio model that decrypts with a key-cache slot.
func ReadPN(frame []byte) (uint64, error) {
	h, err := parseHeader(frame)
	if err != nil {
		return 0, err
	}
	if len(frame) < h.len+HeaderLen {
		return 0, ErrShort
	}
	return readPN(frame[h.len:]), nil
}

// HeaderLenOf returns the MAC header length of an MPDU as CCMP sees it
// (where the CCMP header goes), for a caller that reserves room for it.
func HeaderLenOf(frame []byte) (int, error) {
	h, err := parseHeader(frame)
	if err != nil {
		return 0, err
	}
	return h.len, nil
}
