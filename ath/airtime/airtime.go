// Package airtime computes how long 802.11 frames and frame exchanges occupy
// the medium: PPDU durations for DSSS/CCK, OFDM (including ERP-OFDM) and HT
// (HT-mixed format, 20/40 MHz, long and short guard interval, 1–4 spatial
// streams), the control responses (ACK, BlockAck, RTS/CTS) and the contention
// overhead (AIFS/DIFS, expected binary-exponential backoff).
//
// All durations are whole microseconds, rounded exactly as the standard's
// TXTIME equations round them. References are to IEEE Std 802.11-2020:
//
//   - 15.3.x/16.3.x  DSSS and HR/DSSS PLCP: long preamble+header 192 µs,
//     short 96 µs; payload time ceil(8·L/R).
//   - 17.4.3         OFDM TXTIME = T_PREAMBLE(16) + T_SIGNAL(4) +
//     T_SYM(4)·ceil((16 + 8·L + 6)/N_DBPS).
//   - 18.4.3/18.5.x  ERP: as OFDM plus the 6 µs signal extension in 2.4 GHz.
//   - 19.3.9.4.6     Number of HT-LTFs for N_STS streams: 1, 2, 4, 4.
//   - 19.3.11        N_ES (BCC encoders): 2 when the LGI rate exceeds 300 Mb/s.
//   - 19.4.3         HT-mixed TXTIME = T_LEG_PREAMBLE(16) + T_L-SIG(4) +
//     T_HT-SIG(8) + T_HT-STF(4) + N_LTF·4 + data, with the data part
//     T_SYM·N_SYM for long GI and 4·ceil(3.6·N_SYM/4) for short GI, plus
//     the signal extension in 2.4 GHz. N_SYM = ceil((8·L + 16 + 6·N_ES)/N_DBPS).
//   - 10.3.2.3       SIFS, slot, DIFS = SIFS + 2·slot (AIFS = SIFS + AIFSN·slot).
//   - 10.3.3         backoff: CW doubles per retry from CWmin up to CWmax.
//   - 10.6.6.5       control responses go at the highest basic rate not
//     above the (non-HT reference) rate of the frame they answer.
//
// FreeBSD's ath_hal_computetxtime family, which its rate control uses, always
// assumes long GI, charges 4 µs per HT-LTF per stream (3 streams need 4
// HT-LTFs, not 3), ignores N_ES and rounds short GI per symbol; this package
// does not share those shortcuts.
package airtime

import (
	"errors"
	"fmt"
)

// Modulation is the PHY family of a rate.
type Modulation uint8

const (
	// CCK covers DSSS (1, 2 Mb/s) and HR/DSSS (5.5, 11 Mb/s), Clauses 15/16.
	CCK Modulation = iota + 1
	// OFDM covers Clause 17 OFDM and Clause 18 ERP-OFDM (6..54 Mb/s).
	OFDM
	// HT is Clause 19 HT-mixed format, MCS 0..31.
	HT
)

func (m Modulation) String() string {
	switch m {
	case CCK:
		return "CCK"
	case OFDM:
		return "OFDM"
	case HT:
		return "HT"
	}
	return fmt.Sprintf("Modulation(%d)", uint8(m))
}

// Rate is one PHY rate. For CCK and OFDM, Kbps selects the rate; for HT,
// MCS, HT40 and SGI do.
type Rate struct {
	Mod  Modulation
	Kbps uint32 // legacy only: 1000, 2000, 5500, 11000, 6000 … 54000
	MCS  uint8  // HT only: 0..31 (equal modulation)
	HT40 bool   // HT only: 40 MHz channel
	SGI  bool   // HT only: 400 ns guard interval
	// ShortPreamble selects the 96 µs HR/DSSS preamble (not for 1 Mb/s).
	ShortPreamble bool
}

// Legacy returns the CCK or OFDM rate with the given nominal rate.
func Legacy(kbps uint32) Rate {
	switch kbps {
	case 1000, 2000, 5500, 11000:
		return Rate{Mod: CCK, Kbps: kbps}
	}
	return Rate{Mod: OFDM, Kbps: kbps}
}

// MCS returns the HT rate mcs with the given width and guard interval.
func MCS(mcs uint8, ht40, sgi bool) Rate {
	return Rate{Mod: HT, MCS: mcs, HT40: ht40, SGI: sgi}
}

// ErrInvalidRate reports a rate that is not defined by the standard.
var ErrInvalidRate = errors.New("airtime: invalid rate")

// Validate reports whether r is a defined rate.
func (r Rate) Validate() error {
	switch r.Mod {
	case CCK:
		switch r.Kbps {
		case 1000:
			if r.ShortPreamble {
				return fmt.Errorf("%w: 1 Mb/s has no short preamble", ErrInvalidRate)
			}
			return nil
		case 2000, 5500, 11000:
			return nil
		}
	case OFDM:
		if ofdmDBPS(r.Kbps) != 0 {
			return nil
		}
	case HT:
		if r.MCS <= 31 {
			return nil
		}
	}
	return fmt.Errorf("%w: %v", ErrInvalidRate, r)
}

func (r Rate) String() string {
	switch r.Mod {
	case CCK, OFDM:
		return fmt.Sprintf("%s %d.%d Mb/s", r.Mod, r.Kbps/1000, r.Kbps%1000/100)
	case HT:
		w, g := 20, "LGI"
		if r.HT40 {
			w = 40
		}
		if r.SGI {
			g = "SGI"
		}
		return fmt.Sprintf("MCS%d/%d/%s", r.MCS, w, g)
	}
	return fmt.Sprintf("Rate{%d}", r.Mod)
}

// Streams returns the number of spatial streams (1 for legacy rates).
func (r Rate) Streams() int {
	if r.Mod != HT {
		return 1
	}
	return int(r.MCS/8) + 1
}

// htDBPS1 is N_DBPS for one spatial stream, MCS 0..7, 20 and 40 MHz
// (802.11-2020 Tables 19-27 and 19-28; higher stream counts multiply).
var htDBPS1 = [2][8]uint16{
	{26, 52, 78, 104, 156, 208, 234, 260},
	{54, 108, 162, 216, 324, 432, 486, 540},
}

// nonHTRef is the non-HT reference rate (kb/s) of MCS 0..7 per stream,
// used to pick the control-response rate (802.11-2020 10.6.6.5.2 and the
// modulation/coding pairs of Table 19-27).
var nonHTRef = [8]uint32{6000, 12000, 18000, 24000, 36000, 48000, 54000, 54000}

func ofdmDBPS(kbps uint32) int {
	switch kbps {
	case 6000:
		return 24
	case 9000:
		return 36
	case 12000:
		return 48
	case 18000:
		return 72
	case 24000:
		return 96
	case 36000:
		return 144
	case 48000:
		return 192
	case 54000:
		return 216
	}
	return 0
}

// DataBitsPerSymbol returns N_DBPS of an OFDM or HT rate, 0 otherwise.
func (r Rate) DataBitsPerSymbol() int {
	switch r.Mod {
	case OFDM:
		return ofdmDBPS(r.Kbps)
	case HT:
		if r.MCS > 31 {
			return 0
		}
		w := 0
		if r.HT40 {
			w = 1
		}
		return int(htDBPS1[w][r.MCS%8]) * r.Streams()
	}
	return 0
}

// KbpsNominal returns the nominal data rate in kb/s.
func (r Rate) KbpsNominal() uint32 {
	if r.Mod != HT {
		return r.Kbps
	}
	d := uint32(r.DataBitsPerSymbol())
	if r.SGI {
		return d * 10000 / 36 // N_DBPS bits per 3.6 µs
	}
	return d * 1000 / 4
}

// encoders is N_ES: HT rates above 300 Mb/s (long GI) use two BCC
// encoders, each adding its own 6 tail bits (802.11-2020 19.3.11).
func (r Rate) encoders() int {
	if r.Mod == HT && r.DataBitsPerSymbol() > 1200 {
		return 2
	}
	return 1
}

// htLTFs is the number of HT-LTFs for the rate's streams: 1, 2, 4, 4
// (802.11-2020 19.3.9.4.6, N_STS → N_HT-DLTF).
func htLTFs(streams int) int {
	if streams >= 3 {
		return 4
	}
	return streams
}

// Band selects the timing set.
type Band uint8

const (
	Band2GHz Band = iota + 1
	Band5GHz
)

// PHY holds the MAC/PHY timing parameters of a BSS.
type PHY struct {
	Band      Band
	Slot      int // µs: 9 (OFDM, short-slot ERP) or 20 (long-slot 2.4 GHz, DSSS)
	SIFS      int // µs: 16 (5 GHz OFDM), 10 (2.4 GHz)
	SignalExt int // µs: 6 for ERP-OFDM and HT in 2.4 GHz, else 0
	AIFSN     int // 2 gives DIFS (DCF); EDCA AC_BE uses 3
	CWMin     int // 15 for OFDM/HT PHYs, 31 for DSSS
	CWMax     int // 1023
}

// FiveGHz returns 5 GHz OFDM/HT timing with DCF (DIFS) access:
// slot 9, SIFS 16, DIFS 34, CW 15..1023 (802.11-2020 Table 17-21).
func FiveGHz() PHY {
	return PHY{Band: Band5GHz, Slot: 9, SIFS: 16, AIFSN: 2, CWMin: 15, CWMax: 1023}
}

// TwoGHz returns 2.4 GHz ERP timing: SIFS 10, slot 9 (short slot) or 20,
// 6 µs signal extension after OFDM/HT PPDUs (802.11-2020 Table 18-5).
func TwoGHz(shortSlot bool) PHY {
	p := PHY{Band: Band2GHz, Slot: 20, SIFS: 10, SignalExt: 6, AIFSN: 2, CWMin: 15, CWMax: 1023}
	if shortSlot {
		p.Slot = 9
	}
	return p
}

// AIFS returns SIFS + AIFSN·slot (DIFS when AIFSN is 2).
func (p PHY) AIFS() int { return p.SIFS + p.AIFSN*p.Slot }

// TxTime returns the duration in µs of a PPDU carrying psdu bytes at r, or
// 0 if r is invalid or psdu negative. It allocates nothing.
func (p PHY) TxTime(r Rate, psdu int) int {
	if psdu < 0 {
		return 0
	}
	switch r.Mod {
	case CCK:
		var plcp int
		switch {
		case r.Kbps == 1000 || !r.ShortPreamble:
			plcp = 192 // 144 µs preamble + 48 µs PLCP header
		default:
			plcp = 96 // 72 µs short preamble + 24 µs header
		}
		switch r.Kbps {
		case 1000, 2000, 5500, 11000:
		default:
			return 0
		}
		// ceil(8·L / R) with R in Mb/s = ceil(8000·L / kbps) µs.
		return plcp + ceilDiv(8000*psdu, int(r.Kbps))
	case OFDM:
		d := ofdmDBPS(r.Kbps)
		if d == 0 {
			return 0
		}
		nsym := ceilDiv(16+8*psdu+6, d)
		return 16 + 4 + 4*nsym + p.SignalExt
	case HT:
		d := r.DataBitsPerSymbol()
		if d == 0 {
			return 0
		}
		nsym := ceilDiv(8*psdu+16+6*r.encoders(), d)
		pre := 16 + 4 + 8 + 4 + 4*htLTFs(r.Streams())
		var data int
		if r.SGI {
			// T_SYML·ceil(T_SYMS·N_SYM / T_SYML) = 4·ceil(3.6·N/4) = 4·ceil(9N/10).
			data = 4 * ceilDiv(9*nsym, 10)
		} else {
			data = 4 * nsym
		}
		return pre + data + p.SignalExt
	}
	return 0
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

var (
	basicCCK  = [...]uint32{1000, 2000, 5500, 11000}
	basicOFDM = [...]uint32{6000, 12000, 24000} // the mandatory OFDM rates
)

// ControlRate returns the rate of a control response (ACK, BlockAck, CTS)
// to a frame sent at r: the highest mandatory rate of the same family not
// above r (for HT, not above its non-HT reference rate). The mandatory
// rates stand in for the BSSBasicRateSet.
func (p PHY) ControlRate(r Rate) Rate {
	switch r.Mod {
	case CCK:
		best := basicCCK[0]
		for _, k := range basicCCK {
			if k <= r.Kbps {
				best = k
			}
		}
		return Rate{Mod: CCK, Kbps: best, ShortPreamble: r.ShortPreamble && best != 1000}
	case OFDM, HT:
		ref := r.Kbps
		if r.Mod == HT {
			ref = nonHTRef[r.MCS%8]
		}
		best := basicOFDM[0]
		for _, k := range basicOFDM {
			if k <= ref {
				best = k
			}
		}
		return Rate{Mod: OFDM, Kbps: best}
	}
	return Rate{Mod: OFDM, Kbps: 6000}
}

// Frame lengths (bytes, including FCS) of the control frames
// (802.11-2020 9.3.1): ACK and CTS 14, RTS 20, compressed BlockAck 32.
const (
	ACKLen      = 14
	CTSLen      = 14
	RTSLen      = 20
	BlockAckLen = 32
)

// Ack is the kind of acknowledgement an exchange waits for.
type Ack uint8

const (
	NoAck     Ack = iota // group-addressed or no-ack policy
	NormalAck            // single MPDU: ACK
	BlockAck             // A-MPDU: compressed BlockAck (implicit BAR)
)

// Exchange returns the medium time of one attempt after contention: the
// optional RTS/CTS (each followed by SIFS), the data PPDU, and SIFS plus
// the acknowledgement. Control frames go at ControlRate(r).
func (p PHY) Exchange(r Rate, psdu int, ack Ack, rts bool) int {
	t := p.TxTime(r, psdu)
	cr := p.ControlRate(r)
	if rts {
		t += p.TxTime(cr, RTSLen) + p.SIFS + p.TxTime(cr, CTSLen) + p.SIFS
	}
	switch ack {
	case NormalAck:
		t += p.SIFS + p.TxTime(cr, ACKLen)
	case BlockAck:
		t += p.SIFS + p.TxTime(cr, BlockAckLen)
	}
	return t
}

// Backoff returns the expected backoff (µs) before transmission attempt n
// (0 = first): slot·CW/2 with CW = min(CWmax, (CWmin+1)·2^n − 1).
func (p PHY) Backoff(n int) int {
	cw := p.CWMin
	for i := 0; i < n && cw < p.CWMax; i++ {
		cw = 2*cw + 1
	}
	if cw > p.CWMax {
		cw = p.CWMax
	}
	return p.Slot * cw / 2
}

// Attempts returns the expected medium time of attempts first..first+n-1
// of one frame: each costs AIFS, its expected backoff and one Exchange.
func (p PHY) Attempts(r Rate, psdu int, ack Ack, rts bool, first, n int) int {
	ex := p.Exchange(r, psdu, ack, rts)
	t := 0
	for i := first; i < first+n; i++ {
		t += p.AIFS() + p.Backoff(i) + ex
	}
	return t
}
