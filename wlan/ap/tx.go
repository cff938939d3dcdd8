package ap

import (
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/internal/mpdupool"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// maxMPDU is the largest MPDU the AP builds: a 4-address QoS header (32),
// the CCMP header, an MSDU of 2304 octets (802.11-2016 9.2.4.7.1) with
// its LLC/SNAP header, and the MIC.
const maxMPDU = 32 + ccmp.HeaderLen + wlan.MSDUHeaderLen + 2304 + ccmp.MICLen

// Retry schedules until rate control (ath/rate) sits between the AP and
// the radio: management and group frames at 6 Mb/s OFDM, the lowest rate
// mandatory in both bands (802.11-2016 10.6.6.2 sends them at a basic
// rate), data falling back from 54 to 6 Mb/s. Tries per series follow
// ath9k's four-series default of a few tries each.
var (
	mgmtSeries = [radio.MaxSeries]radio.Series{{Rate: airtime.Legacy(6000), Tries: 4}}
	dataSeries = [radio.MaxSeries]radio.Series{
		{Rate: airtime.Legacy(54000), Tries: 2},
		{Rate: airtime.Legacy(24000), Tries: 2},
		{Rate: airtime.Legacy(12000), Tries: 2},
		{Rate: airtime.Legacy(6000), Tries: 4},
	}
)

// txDone sees every request's outcome.
func (a *AP) txDone(req *radio.TxRequest, st *radio.TxStatus) {
	if !req.NoAck && !st.Acked {
		a.Stats.TxFailed.Add(1)
	}
}

// submit hands f with MPDU mpdu (built in f.Buf) to the radio.
func (a *AP) submit(f *mpdupool.Frame, mpdu []byte, key int, noAck bool, series *[radio.MaxSeries]radio.Series) {
	if a.tx.Submit(a.radio, f, mpdu, key, noAck, series) != nil {
		a.Stats.TxDropped.Add(1) // a full radio loses the frame, like the air
	}
}

// sendEAPOL sends an EAPOL frame to s in a data frame, unprotected during
// the 4-way handshake and protected with the PTK after it (group key
// handshake).
func (a *AP) sendEAPOL(s *station, eapol []byte) {
	a.sendData(s, s.addr, a.cfg.BSSID, wpa.EtherTypeEAPOL, eapol, true)
}

// sendData builds a data frame from the AP: to station s (FromDS, or four
// addresses for a 4-address station, A3 the destination and A4 the
// source: 802.11-2016 Table 9-26), or to the group da when s is nil. With
// protect and keys in place it is protected with the PTK (group: GTK), in
// software or by the radio.
func (a *AP) sendData(s *station, da, sa wlan.MAC, etherType uint16, payload []byte, protect bool) {
	t := a.tx.Get()
	if t == nil {
		a.Stats.TxDropped.Add(1)
		return
	}
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindData, wlan.FlagFromDS), Addr1: da, Addr2: a.cfg.BSSID, Addr3: sa}
	var key *ccmp.Key
	slot := radio.NoKey
	if s != nil {
		h.Seq = wlan.NewSeqControl(s.seq.Next(wlan.NonQoSTID), 0)
		if s.wds {
			h.FC = wlan.NewFrameControl(wlan.KindData, wlan.FlagFromDS|wlan.FlagToDS)
			h.Addr1, h.Addr3, h.Addr4 = s.addr, da, sa
		}
		key, slot = s.key, s.slot
	} else {
		h.Seq = wlan.NewSeqControl(a.seq.Next(wlan.NonQoSTID), 0)
		key, slot = a.gtk, a.gtkSlot
	}
	if !protect {
		key, slot = nil, radio.NoKey
	}
	if len(payload) > cap(t.Buf)-wlan.MSDUHeaderLen-32-ccmp.Overhead {
		a.Stats.TxDropped.Add(1)
		a.tx.Put(t)
		return
	}
	hw := key != nil && slot != radio.NoKey
	if hw {
		h.FC |= wlan.FlagProtected
	}
	f := wlan.AppendHeader(t.Buf[:0], &h)
	if hw {
		// Hardware crypto: the Protected bit and room for the CCMP
		// header and MIC, which the radio fills in (radio.TxRequest).
		f = append(f, make8[:]...)
		f = wlan.AppendMSDU(f, etherType, payload)
		f = append(f, make8[:]...)
	} else {
		f = wlan.AppendMSDU(f, etherType, payload)
		if key != nil {
			var err error
			if f, err = key.Encap(f); err != nil {
				a.Stats.TxDropped.Add(1)
				a.tx.Put(t)
				return
			}
		}
		slot = radio.NoKey
	}
	if s == nil && key != nil && slot != radio.NoKey {
		// The radio takes the group PN from the slot, once per frame
		// (group frames are sent once): count it here so that the RSC
		// given to stations is right.
		key.SetTxPN(key.TxPN() + 1)
	}
	series := &dataSeries
	if s == nil {
		series = &mgmtSeries
	}
	a.submit(t, f, slot, s == nil, series)
}

// make8 is the zeroed room for a CCMP header or MIC.
var make8 [ccmp.HeaderLen]byte
