package ap

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/internal/ht"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// ethHeaderLen is DA, SA and EtherType.
const ethHeaderLen = 14

var _ radio.Receiver = (*AP)(nil)

// Receive implements radio.Receiver: it handles one frame from the air
// (no FCS) with its receive status (nil: nothing known, nothing
// decrypted). The frame is only read; anything malformed is dropped and
// counted. The AP's notion of time is the last Tick's.
//
// A frame for the distribution system is handed to ToDS after the AP's
// lock is released, so that ToDS may call SendFromDS (a bridge flooding,
// a stack answering at once). Calls to Receive are serialised.
func (a *AP) Receive(frame []byte, st *radio.RxStatus) {
	a.rxMu.Lock()
	defer a.rxMu.Unlock()
	a.mu.Lock()
	a.dsN = 0
	a.receive(frame, st)
	toDS, n := a.toDS, a.dsN
	a.mu.Unlock()
	if toDS == nil {
		return
	}
	for _, eth := range a.dsBufs[:n] {
		toDS(eth)
	}
}

func (a *AP) receive(frame []byte, st *radio.RxStatus) {
	if !a.started {
		return
	}
	h, err := wlan.ParseHeader(frame)
	if err != nil {
		a.Stats.Malformed.Add(1)
		return
	}
	body := frame[h.Len:]
	if a.duplicate(&h) {
		return
	}
	switch h.FC.Kind().Type() {
	case wlan.TypeManagement:
		a.receiveMgmt(&h, body)
	case wlan.TypeData:
		a.receiveData(&h, frame, st)
	case wlan.TypeControl:
		if h.FC.Kind() == wlan.KindBlockAckReq {
			a.receiveBAR(&h, body)
		}
		if h.FC.Kind() == wlan.KindPSPoll && h.Addr1 == a.cfg.BSSID {
			if s := a.stations[h.Addr2]; s != nil && s.state == stateAuthorized && wlan.PSPollAID(&h) == s.aid {
				s.lastSeen = a.now
				a.releaseOne(s)
			}
		}
	}
}

// duplicate reports (and counts) a management or data frame to the AP
// that repeats the last one from the same station (802.11-2016
// 10.3.2.14): the station's radio sent it again because our ACK was lost.
func (a *AP) duplicate(h *wlan.Header) bool {
	if h.FC.Kind().Type() == wlan.TypeControl || h.Addr1 != a.cfg.BSSID {
		return false
	}
	s := a.stations[h.Addr2]
	if s == nil {
		return false
	}
	tid := uint8(wlan.NonQoSTID)
	if h.FC.IsQoSData() {
		tid = h.QoS.TID()
	}
	if s.dup.Check(tid, h.Seq, h.FC.Retry()) {
		a.Stats.Duplicates.Add(1)
		return true
	}
	return false
}

func (a *AP) receiveMgmt(h *wlan.Header, body []byte) {
	k := h.FC.Kind()
	if k == wlan.KindProbeReq {
		a.probe(h, body)
		return
	}
	if h.Addr1 != a.cfg.BSSID || h.Addr3 != a.cfg.BSSID {
		a.Stats.NotForUs.Add(1)
		return
	}
	if h.Addr2.IsGroup() {
		a.Stats.Malformed.Add(1)
		return
	}
	switch k {
	case wlan.KindAuth:
		if a.limited() {
			return
		}
		a.authenticate(h, body)
	case wlan.KindAssocReq, wlan.KindReassocReq:
		if a.limited() {
			return
		}
		a.associate(h.Addr2, body, k == wlan.KindReassocReq)
	case wlan.KindAction:
		if s := a.stations[h.Addr2]; s != nil && s.state >= stateAssociated {
			s.lastSeen = a.now
			a.receiveAction(s, body)
		}
	case wlan.KindDeauth, wlan.KindDisassoc:
		if s := a.stations[h.Addr2]; s != nil {
			if k == wlan.KindDisassoc && s.state > stateAuthenticated {
				// Disassociation keeps the authentication (11.3.5.8).
				if s.aid != 0 {
					a.aids[s.aid-1] = nil
					a.clearTIM(s.aid)
				}
				a.stopHT(s)
				a.dropKey(s)
				a.forgetBehind(s)
				s.aid, s.state, s.auth, s.psQueue, s.wds, s.groupPending = 0, stateAuthenticated, nil, nil, false, false
				a.finishGroupRekey()
				s.lastSeen = a.now
				return
			}
			a.remove(s)
			a.finishGroupRekey()
		}
	}
}

// limited applies the token bucket of authentication and association
// requests: MgmtRate a second, with a burst of MgmtRate.
func (a *AP) limited() bool {
	rate := float64(a.cfg.MgmtRate)
	a.bucket += a.now.Sub(a.bucketAt).Seconds() * rate
	a.bucketAt = a.now
	if a.bucket > rate {
		a.bucket = rate
	}
	if a.bucket < 1 {
		a.Stats.RateLimited.Add(1)
		return true
	}
	a.bucket--
	return false
}

func (a *AP) probe(h *wlan.Header, body []byte) {
	if h.Addr1 != wlan.Broadcast && h.Addr1 != a.cfg.BSSID {
		return
	}
	es, err := ie.Parse(body)
	if err != nil || es.SSID == nil {
		a.Stats.Malformed.Add(1)
		return
	}
	// A wildcard probe (empty SSID) gets an answer unless the SSID is
	// hidden; a directed one only when it names our SSID (11.1.4.3.2).
	if len(es.SSID) == 0 {
		if a.cfg.Hidden {
			return
		}
	} else if string(es.SSID) != a.cfg.SSID {
		return
	}
	if h.Addr2.IsGroup() {
		return
	}
	a.Stats.ProbeResponses.Add(1)
	a.sendMgmt(wlan.KindProbeResp, h.Addr2, func(b []byte) []byte { return a.beaconBody(b, false, false) })
}

func (a *AP) authenticate(h *wlan.Header, body []byte) {
	sa := h.Addr2
	req, err := wlan.ParseAuth(body)
	if err != nil {
		a.Stats.Malformed.Add(1)
		return
	}
	resp := wlan.Auth{Algorithm: req.Algorithm, Seq: 2}
	s := a.stations[sa]
	switch {
	case req.Algorithm != wlan.AuthOpenSystem:
		resp.Status = wlan.StatusAuthAlgUnsupported
	case req.Seq != 1:
		resp.Status = wlan.StatusAuthSeqUnexpected
	case s == nil && len(a.stations) >= a.cfg.MaxStations:
		a.Stats.TableFull.Add(1)
		resp.Status = wlan.StatusAPFull
	case a.authCfg != nil && a.authCfg.Guard.Refused(sa, a.now):
		resp.Status = wlan.StatusRequestDeclined
	default:
		// A new authentication resets an existing association
		// (11.3.5.1 of a station re-authenticating).
		if s != nil {
			a.remove(s)
		}
		ns := &station{addr: sa, state: stateAuthenticated, lastSeen: a.now, slot: radio.NoKey}
		ns.dup.Check(wlan.NonQoSTID, h.Seq, h.FC.Retry()) // its retransmissions are duplicates
		a.stations[sa] = ns
		a.Stats.Authenticated.Add(1)
	}
	a.sendMgmt(wlan.KindAuth, sa, resp.Append)
}

func (a *AP) associate(sa wlan.MAC, body []byte, reassoc bool) {
	s := a.stations[sa]
	if s == nil {
		// Class 2 frame from a station not authenticated (11.3.3).
		a.sendDeauth(sa, wlan.ReasonClass2FromNonAuth)
		return
	}
	s.lastSeen = a.now
	kind := wlan.KindAssocResp
	if reassoc {
		kind = wlan.KindReassocResp
	}
	resp := wlan.AssocResp{Capability: wlan.CapESS | wlan.CapShortSlotTime}
	if !a.cfg.Open {
		resp.Capability |= wlan.CapPrivacy
	}
	req, err := wlan.ParseAssocReq(body, reassoc)
	var es ie.Elements
	if err == nil {
		es, err = ie.Parse(req.IEs)
	}
	var rsne []byte
	switch {
	case err != nil:
		a.Stats.Malformed.Add(1)
		resp.Status = wlan.StatusInvalidIE
	case string(es.SSID) != a.cfg.SSID:
		resp.Status = wlan.StatusUnspecified
	case a.cfg.Open:
		// An open network takes no RSN element.
	case es.RSN == nil:
		resp.Status = wlan.StatusInvalidIE
	default:
		rsn, err := ie.ParseRSN(es.RSN)
		switch {
		case err != nil:
			resp.Status = wlan.StatusInvalidIE
		case !rsn.HasPairwise(ie.CipherCCMP128):
			resp.Status = wlan.StatusInvalidPairwiseCipher
		case !rsn.HasAKM(ie.AKMPSK):
			resp.Status = wlan.StatusInvalidAKMP
		default:
			rsne = elementBytes(req.IEs, ie.IDRSN)
		}
	}
	if resp.Status == wlan.StatusSuccess && s.aid == 0 {
		s.aid = a.allocAID(s)
		if s.aid == 0 {
			a.Stats.TableFull.Add(1)
			resp.Status = wlan.StatusAPFull
		}
	}
	if resp.Status != wlan.StatusSuccess {
		a.sendMgmt(kind, sa, resp.Append)
		return
	}
	a.associateHT(s, &es)
	resp.AID = s.aid
	resp.IEs = ie.AppendRates(nil, rates)
	if s.ht {
		resp.IEs = a.htElements(resp.IEs)
	}
	a.sendMgmt(kind, sa, resp.Append)
	a.Stats.Associated.Add(1)
	a.dropKey(s)
	a.forgetBehind(s)
	s.state, s.psQueue, s.dozing, s.wds, s.groupPending = stateAssociated, nil, false, false, false
	if a.cfg.Open {
		s.state = stateAuthorized
		a.Stats.Authorized.Add(1)
		a.authorizedHT(s)
		return
	}
	if s.auth == nil || !bytes.Equal(s.authRSNE, rsne) {
		s.auth = wpa.NewAuthenticator(a.authCfg, sa, append([]byte(nil), rsne...))
		s.authRSNE = append(s.authRSNE[:0], rsne...)
	}
	// A station that associates again (its request crossed our answer)
	// keeps its authenticator: the 4-way handshake restarts with a new
	// ANonce but the replay counter goes on, so an answer to the old
	// message 1 is a stale replay, not a MIC failure (hostapd keeps its
	// per-station state machine across reassociation the same way).
	msg, err := s.auth.Start(a.now)
	if err == nil {
		a.sendEAPOL(s, msg)
	}
}

// elementBytes returns the whole element id (header included) in b.
func elementBytes(b []byte, id ie.ID) []byte {
	it := ie.NewIter(b)
	off := 0
	for {
		e, ok := it.Next()
		if !ok {
			return nil
		}
		n := 2 + len(e.Body)
		if e.ID == id {
			return b[off : off+n]
		}
		off += n
	}
}

func (a *AP) allocAID(s *station) uint16 {
	for i, x := range a.aids {
		if x == nil {
			a.aids[i] = s
			return uint16(i + 1)
		}
	}
	return 0
}

func (a *AP) receiveData(h *wlan.Header, frame []byte, st *radio.RxStatus) {
	if !h.FC.ToDS() || h.Addr1 != a.cfg.BSSID {
		a.Stats.NotForUs.Add(1)
		return
	}
	fourAddr := h.FC.FromDS()
	s := a.stations[h.Addr2]
	if s == nil || s.state < stateAssociated {
		// Class 3 frame from a station not associated (11.3.3).
		a.Stats.Unauthorized.Add(1)
		if !h.Addr2.IsGroup() {
			a.sendDeauth(h.Addr2, wlan.ReasonClass3FromNonAssoc)
		}
		return
	}
	if fourAddr && !a.cfg.WDS {
		a.Stats.WDSRefused.Add(1)
		return
	}
	s.lastSeen = a.now
	a.powerSave(s, h.FC.PwrMgt())
	if !h.FC.HasBody() {
		// A 4-address Null frame is how a 4-address station announces
		// itself (mac80211 sends one after association in 4addr mode).
		if fourAddr && s.state == stateAuthorized {
			s.wds = true
		}
		return
	}
	if h.FC.IsQoSData() && s.rx != nil && s.rx.Offer(h.QoS.TID(), h.Seq.Seq(), frame, st, a.now) {
		return // delivered in order by receiveInOrder
	}
	a.receiveMPDU(s, h, frame, st)
}

// receiveInOrder is the reorder stage's delivery: an MPDU of an HT
// station's Block Ack agreement, in sequence order.
func (a *AP) receiveInOrder(frame []byte, st *radio.RxStatus) {
	h, err := wlan.ParseHeader(frame)
	if err != nil {
		return
	}
	if s := a.stations[h.Addr2]; s != nil {
		a.receiveMPDU(s, &h, frame, st)
	}
}

// receiveMPDU takes a data MPDU from associated station s: decryption
// and the PN check, then each MSDU (one, or the subframes of an A-MSDU).
func (a *AP) receiveMPDU(s *station, h *wlan.Header, frame []byte, st *radio.RxStatus) {
	if h.FC.Protected() {
		if s.key == nil {
			a.Stats.Unauthorized.Add(1)
			return
		}
		plain, ok := a.unprotect(s, frame, st)
		if !ok {
			return
		}
		frame = plain
	}
	body := frame[h.Len:]
	if h.FC.IsQoSData() && h.QoS.AMSDU() {
		a.receiveAMSDU(s, h, body)
		return
	}
	etherType, payload, err := wlan.ParseMSDU(body)
	if err != nil {
		a.Stats.Malformed.Add(1)
		return
	}
	da, sa := h.Addr3, h.Addr2
	if h.FC.FromDS() {
		sa = h.Addr4
	}
	a.receiveMSDU(s, h, da, sa, etherType, payload)
}

// receiveAMSDU bridges each subframe of an A-MSDU (802.11-2016 9.3.2.2)
// from an HT station, which may send them only under an HT association
// and never EAPOL inside (the handshake runs before aggregation).
func (a *AP) receiveAMSDU(s *station, h *wlan.Header, body []byte) {
	if !s.ht || s.state != stateAuthorized {
		a.Stats.Malformed.Add(1)
		return
	}
	a.Stats.RxAMSDU.Add(1)
	msdus, ok := ht.OpenAMSDU(body)
	if !ok {
		a.Stats.Malformed.Add(1) // a plain MSDU turned into an A-MSDU by a flipped bit
		return
	}
	for {
		sub, etherType, payload, ok := msdus.Next()
		if !ok {
			break
		}
		sa := sub.SA
		if !h.FC.FromDS() && sa != s.addr {
			// A 3-address station sends only for itself.
			a.Stats.Malformed.Add(1)
			continue
		}
		a.receiveMSDU(s, h, sub.DA, sa, etherType, payload)
	}
	if msdus.Bad != 0 {
		a.Stats.Malformed.Add(msdus.Bad)
	}
}

// receiveMSDU handles one MSDU from s for da from sa.
func (a *AP) receiveMSDU(s *station, h *wlan.Header, da, sa wlan.MAC, etherType uint16, payload []byte) {
	fourAddr := h.FC.FromDS()
	if etherType == wpa.EtherTypeEAPOL {
		a.receiveEAPOL(s, payload)
		return
	}
	if s.state != stateAuthorized {
		a.Stats.Unauthorized.Add(1)
		return
	}
	if !h.FC.Protected() && !a.cfg.Open {
		a.Stats.Unprotected.Add(1)
		return
	}
	if fourAddr {
		s.wds = true
		a.learnBehind(s, sa)
	}
	if da.IsGroup() {
		a.deliverDS(da, sa, etherType, payload)
		a.sendGroup(s, da, sa, etherType, payload)
		return
	}
	if d := a.unicastReceiver(da); d != nil {
		if d != s {
			a.Stats.Relayed.Add(1)
			a.sendUnicast(d, da, sa, etherType, payload)
		}
		return
	}
	a.deliverDS(da, sa, etherType, payload)
}

// unprotect returns the plaintext of protected frame from s: decrypted
// and checked in software, or, when the radio decrypted it, checked
// against s's replay counters. The frame is borrowed, so either works on
// a copy in rxBuf.
func (a *AP) unprotect(s *station, frame []byte, st *radio.RxStatus) ([]byte, bool) {
	if st != nil && st.DecryptErr {
		a.Stats.CCMPErrors.Add(1)
		return nil, false
	}
	a.rxBuf = append(a.rxBuf[:0], frame...)
	var plain []byte
	var err error
	if st != nil && st.Decrypted {
		plain, err = s.key.AcceptDecrypted(a.rxBuf)
	} else {
		plain, err = s.key.Decap(a.rxBuf)
	}
	if err != nil {
		if errors.Is(err, ccmp.ErrReplay) {
			a.Stats.Replays.Add(1)
		} else {
			a.Stats.CCMPErrors.Add(1)
		}
		return nil, false
	}
	return plain, true
}

// unicastReceiver returns the authorized station that receives frames for
// da: the station itself, or the 4-address station it is behind.
func (a *AP) unicastReceiver(da wlan.MAC) *station {
	if d := a.stations[da]; d != nil && d.state == stateAuthorized {
		return d
	}
	return a.behindStation(da)
}

// deliverDS builds an Ethernet frame for the DS in dsBufs, which only
// Receive (serialised by rxMu) uses; Receive hands them over unlocked.
// The buffers are kept for the next frames: the steady state allocates
// nothing.
func (a *AP) deliverDS(da, sa wlan.MAC, etherType uint16, payload []byte) {
	if a.toDS == nil {
		return
	}
	if a.dsN == len(a.dsBufs) {
		a.dsBufs = append(a.dsBufs, make([]byte, 0, 2048))
	}
	e := append(a.dsBufs[a.dsN][:0], da[:]...)
	e = append(e, sa[:]...)
	if a.cfg.VLAN != 0 {
		// IEEE 802.1Q-2018 9.6: TPID 0x8100, then PCP 0, DEI 0, VID.
		e = binary.BigEndian.AppendUint16(e, tpid8021Q)
		e = binary.BigEndian.AppendUint16(e, a.cfg.VLAN)
	}
	e = binary.BigEndian.AppendUint16(e, etherType)
	e = append(e, payload...)
	a.dsBufs[a.dsN] = e
	a.dsN++
	a.Stats.RxData.Add(1)
}

// SetToDS replaces the hook that receives Ethernet frames for the
// distribution system (Config.ToDS).
func (a *AP) SetToDS(fn func(eth []byte)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.toDS = fn
}

func (a *AP) receiveEAPOL(s *station, eapol []byte) {
	if s.auth == nil {
		a.Stats.Unauthorized.Add(1)
		return
	}
	resp, ev, err := s.auth.Receive(eapol, a.now)
	if errors.Is(err, wpa.ErrMICMismatch) {
		a.Stats.EAPOLMICFails.Add(1)
	}
	if resp != nil {
		a.sendEAPOL(s, resp)
	}
	if ev&wpa.EventFailed != 0 {
		a.handshakeFailed(s)
		return
	}
	if ev&wpa.EventPTK != 0 {
		ptk, _ := s.auth.PTK()
		if err := a.installPairwise(s, ptk.TK); err != nil {
			a.handshakeFailed(s)
			return
		}
		s.state = stateAuthorized
		a.Stats.Authorized.Add(1)
		a.authorizedHT(s)
		if a.gtkNext != nil {
			// It got the new GTK in message 3 while a rekey is under
			// way; it holds nothing up.
			s.groupPending = false
		}
	} else if ev&wpa.EventGTK != 0 && s.groupPending {
		s.groupPending = false
		a.finishGroupRekey()
	}
}

// powerSave follows the station's Power Management bit (11.2.3.2): while
// it dozes, unicast frames are buffered and its TIM bit set; when it
// wakes they are sent.
func (a *AP) powerSave(s *station, dozing bool) {
	if s.dozing == dozing {
		return
	}
	s.dozing = dozing
	if !dozing {
		for len(s.psQueue) > 0 {
			a.releaseOne(s)
		}
	}
}

// releaseOne sends the oldest buffered frame of s (a PS-Poll answer or a
// wake-up flush).
func (a *AP) releaseOne(s *station) {
	if len(s.psQueue) == 0 {
		return
	}
	e := s.psQueue[0]
	s.psQueue[0] = nil
	s.psQueue = s.psQueue[1:]
	if len(s.psQueue) == 0 {
		a.clearTIM(s.aid)
	}
	a.sendToStation(s, wlan.MAC(e[0:6]), wlan.MAC(e[6:12]), binary.BigEndian.Uint16(e[12:14]), e[14:])
}

// SendFromDS transmits an Ethernet frame from the distribution system:
// to one authorized station (protected with its PTK), to the 4-address
// station the destination is behind, or, for a group address, to all of
// them (protected with the GTK). With Config.VLAN the frame must carry
// that VLAN's tag, which is removed. The frame is only read.
func (a *AP) SendFromDS(eth []byte) error {
	if len(eth) < ethHeaderLen {
		return ErrShortEth
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		return ErrNotStarted
	}
	da, sa := wlan.MAC(eth[0:6]), wlan.MAC(eth[6:12])
	etherType := binary.BigEndian.Uint16(eth[12:14])
	payload := eth[ethHeaderLen:]
	if a.cfg.VLAN != 0 {
		if etherType != tpid8021Q || len(eth) < ethHeaderLen+4 ||
			binary.BigEndian.Uint16(eth[14:16])&vidMask != a.cfg.VLAN {
			a.Stats.WrongVLAN.Add(1)
			return nil
		}
		etherType = binary.BigEndian.Uint16(eth[16:18])
		payload = eth[ethHeaderLen+4:]
	}
	if da.IsGroup() {
		a.sendGroup(nil, da, sa, etherType, payload)
		return nil
	}
	s := a.unicastReceiver(da)
	if s == nil {
		a.Stats.TxDropped.Add(1)
		return ErrNoStation
	}
	a.sendUnicast(s, da, sa, etherType, payload)
	return nil
}

// IEEE 802.1Q-2018 9.6 and table 9-1.
const (
	tpid8021Q = 0x8100
	vidMask   = 0x0fff
)

func (a *AP) sendUnicast(s *station, da, sa wlan.MAC, etherType uint16, payload []byte) {
	if s.dozing {
		if len(s.psQueue) >= DefaultPSQueue {
			a.Stats.PSDropped.Add(1)
			return
		}
		e := make([]byte, 0, ethHeaderLen+len(payload))
		e = append(append(e, da[:]...), sa[:]...)
		e = binary.BigEndian.AppendUint16(e, etherType)
		s.psQueue = append(s.psQueue, append(e, payload...))
		a.setTIM(s.aid)
		a.Stats.PSBuffered.Add(1)
		return
	}
	a.sendToStation(s, da, sa, etherType, payload)
}

func (a *AP) sendToStation(s *station, da, sa wlan.MAC, etherType uint16, payload []byte) {
	a.Stats.TxData.Add(1)
	if a.sendQoS(s, da, sa, etherType, payload) {
		return
	}
	a.sendData(s, da, sa, etherType, payload, !a.cfg.Open)
}

// sendGroup sends a group-addressed frame that came from station from
// (nil: from the DS). Stations with three addresses share one broadcast
// under the GTK; each 4-address station but the sender gets a 4-address
// unicast copy under its PTK, as mac80211 does for its 4addr stations, so
// that the frame does not come back to the LAN it came from.
func (a *AP) sendGroup(from *station, da, sa wlan.MAC, etherType uint16, payload []byte) {
	plain := false
	for _, s := range a.stations {
		if s.state != stateAuthorized || s == from {
			continue
		}
		if s.wds {
			a.sendUnicast(s, da, sa, etherType, payload)
			continue
		}
		plain = true
	}
	if !plain {
		return
	}
	a.Stats.TxData.Add(1)
	a.sendData(nil, da, sa, etherType, payload, !a.cfg.Open)
	if a.ring != nil && a.gtk != nil && a.gtkNext == nil {
		a.ring.SetRSC(a.gtk.TxPN())
	}
}
