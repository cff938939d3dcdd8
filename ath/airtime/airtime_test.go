package airtime

import (
	"errors"
	"testing"
)

// Every expected value below is computed by hand in the comment beside it,
// from the IEEE 802.11-2020 clauses cited in the package documentation.
func TestTxTimeHandComputed(t *testing.T) {
	g5 := FiveGHz()
	g2 := TwoGHz(true)
	cases := []struct {
		name string
		p    PHY
		r    Rate
		len  int
		want int
	}{
		// 16.3: long preamble 144 + PLCP header 48 = 192; 14 B · 8 / 1 Mb/s = 112 → 304.
		{"CCK1 ACK", g2, Legacy(1000), 14, 304},
		// 2 Mb/s long: 192 + ceil(8·1500/2) = 192 + 6000 = 6192.
		{"CCK2 1500", g2, Legacy(2000), 1500, 6192},
		// 5.5 Mb/s long: 192 + ceil(12000/5.5 = 2181.8) = 192 + 2182 = 2374.
		{"CCK5.5 1500", g2, Legacy(5500), 1500, 2374},
		// 11 Mb/s short preamble 72 + 24 = 96; ceil(12000/11 = 1090.9) = 1091 → 1187.
		{"CCK11s 1500", g2, Rate{Mod: CCK, Kbps: 11000, ShortPreamble: true}, 1500, 1187},
		// 17.4.3: 6 Mb/s N_DBPS 24: ceil((16+112+6)/24 = 5.58) = 6 sym; 16+4+24 = 44.
		{"OFDM6 ACK 5G", g5, Legacy(6000), 14, 44},
		// 24 Mb/s N_DBPS 96: ceil(134/96) = 2 sym → 20 + 8 = 28.
		{"OFDM24 ACK 5G", g5, Legacy(24000), 14, 28},
		// 54 Mb/s N_DBPS 216: ceil((16+12000+6)/216 = 55.66) = 56 → 20 + 224 = 244.
		{"OFDM54 1500 5G", g5, Legacy(54000), 1500, 244},
		// 18.4.3 ERP in 2.4 GHz adds the 6 µs signal extension: 244 + 6 = 250.
		{"ERP54 1500 2G", g2, Legacy(54000), 1500, 250},
		// 19.4.3 HT20 MCS7 LGI: N_DBPS 260; ceil((12000+16+6)/260 = 46.24) = 47 sym
		// = 188 µs; preamble 16+4+8+4+1·4 = 36 → 224.
		{"HT20 MCS7 LGI 1500", g5, MCS(7, false, false), 1500, 224},
		// Same with SGI: 4·ceil(3.6·47/4) = 4·ceil(42.3) = 172 → 36 + 172 = 208.
		{"HT20 MCS7 SGI 1500", g5, MCS(7, false, true), 1500, 208},
		// HT20 MCS0 LGI: N_DBPS 26; ceil((800+22)/26 = 31.6) = 32 sym = 128;
		// 36 + 128 = 164; 2.4 GHz signal extension +6 → 170.
		{"HT20 MCS0 100 2G", g2, MCS(0, false, false), 100, 170},
		// HT40 MCS15 SGI, 65535 B: N_DBPS 2·540 = 1080 (≤1200 → N_ES 1);
		// ceil((524280+22)/1080 = 485.46) = 486 sym; 4·ceil(3.6·486/4 = 437.4)
		// = 1752; preamble 16+4+8+4+2·4 = 40 → 1792.
		{"HT40 MCS15 SGI 64K", g5, MCS(15, true, true), 65535, 1792},
		// HT40 MCS23 LGI: 3 streams, N_DBPS 3·540 = 1620 > 1200 → N_ES 2;
		// ceil((12000+16+12)/1620 = 7.42) = 8 sym = 32; 3 streams need 4
		// HT-LTFs: 16+4+8+4+16 = 48 → 80. (FreeBSD's formula gives 76.)
		{"HT40 MCS23 LGI 1500", g5, MCS(23, true, false), 1500, 80},
		// HT20 MCS31 (4 streams, N_DBPS 4·260 = 1040, N_ES 1), 1500 B:
		// ceil(12022/1040 = 11.56) = 12 sym = 48; 4 HT-LTFs → 48 + 48 = 96.
		{"HT20 MCS31 LGI 1500", g5, MCS(31, false, false), 1500, 96},
		// HT20 MCS8 (2 streams, MCS0 modulation): N_DBPS 52; 1500 B:
		// ceil(12022/52 = 231.2) = 232 sym = 928; preamble 40 → 968.
		{"HT20 MCS8 LGI 1500", g5, MCS(8, false, false), 1500, 968},
		// Zero-length PSDU (NDP-like): HT20 MCS0: ceil(22/26) = 1 sym → 36 + 4 = 40.
		{"HT20 MCS0 0B", g5, MCS(0, false, false), 0, 40},
	}
	for _, c := range cases {
		if got := c.p.TxTime(c.r, c.len); got != c.want {
			t.Errorf("%s: TxTime(%v, %d) = %d µs, want %d", c.name, c.r, c.len, got, c.want)
		}
	}
}

func TestTimingHandComputed(t *testing.T) {
	// 10.3.2.3: DIFS = SIFS + 2·slot. 5 GHz: 16 + 18 = 34.
	if got := FiveGHz().AIFS(); got != 34 {
		t.Errorf("5 GHz DIFS = %d, want 34", got)
	}
	// 2.4 GHz short slot: 10 + 18 = 28; long slot: 10 + 40 = 50.
	if got := TwoGHz(true).AIFS(); got != 28 {
		t.Errorf("2.4 GHz short-slot DIFS = %d, want 28", got)
	}
	if got := TwoGHz(false).AIFS(); got != 50 {
		t.Errorf("2.4 GHz long-slot DIFS = %d, want 50", got)
	}
	p := FiveGHz()
	// 10.3.3: CW 15, 31, 63, … 1023 capped; expected backoff slot·CW/2:
	// 9·15/2 = 67, 9·31/2 = 139, 9·63/2 = 283, attempt 6: CW 1023 → 4603,
	// attempt 9 still 1023 → 4603.
	for n, want := range map[int]int{0: 67, 1: 139, 2: 283, 6: 4603, 9: 4603} {
		if got := p.Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestControlResponses(t *testing.T) {
	p := FiveGHz()
	// 10.6.6.5: HT MCS7 (64-QAM 5/6) has non-HT reference 54 Mb/s; the
	// highest mandatory rate ≤ 54 is 24 Mb/s. ACK at 24: 28 µs.
	// Exchange = PPDU 208 + SIFS 16 + ACK 28 = 252.
	if got := p.Exchange(MCS(7, false, true), 1500, NormalAck, false); got != 252 {
		t.Errorf("MCS7 SGI exchange = %d, want 252", got)
	}
	// MCS0 → reference 6 Mb/s → BlockAck (32 B) at 6 Mb/s:
	// ceil((16+256+6)/24 = 11.58) = 12 sym → 20 + 48 = 68.
	// PPDU HT20 MCS0 LGI 1500: ceil(12022/26 = 462.4) = 463 sym = 1852 + 36
	// = 1888; + SIFS 16 + BA 68 = 1972.
	if got := p.Exchange(MCS(0, false, false), 1500, BlockAck, false); got != 1972 {
		t.Errorf("MCS0 BA exchange = %d, want 1972", got)
	}
	// MCS11 (2 streams, 16-QAM 1/2) → reference 24 → RTS (20 B) at 24:
	// ceil((16+160+6)/96) = 2 sym → 28; CTS 28. PPDU HT20 MCS11 LGI 1500:
	// N_DBPS 208, ceil(12022/208 = 57.8) = 58 sym = 232 + 40 = 272.
	// Total 28+16+28+16 + 272 + 16 + 28 = 404.
	if got := p.Exchange(MCS(11, false, false), 1500, NormalAck, true); got != 404 {
		t.Errorf("MCS11 RTS exchange = %d, want 404", got)
	}
	// CCK 11 short preamble → ACK at 11 short: 96 + ceil(112/11 = 10.2) = 107.
	g2 := TwoGHz(false)
	if got := g2.TxTime(g2.ControlRate(Rate{Mod: CCK, Kbps: 11000, ShortPreamble: true}), ACKLen); got != 107 {
		t.Errorf("CCK11 ACK = %d, want 107", got)
	}
	// Two attempts of the MCS7 SGI exchange: (34 + 67 + 252) + (34 + 139 + 252) = 778.
	if got := p.Attempts(MCS(7, false, true), 1500, NormalAck, false, 0, 2); got != 778 {
		t.Errorf("Attempts = %d, want 778", got)
	}
}

func TestValidate(t *testing.T) {
	good := []Rate{Legacy(1000), Legacy(11000), Legacy(6000), Legacy(54000), MCS(0, false, false), MCS(31, true, true)}
	for _, r := range good {
		if err := r.Validate(); err != nil {
			t.Errorf("%v: %v", r, err)
		}
	}
	bad := []Rate{Legacy(7000), {Mod: CCK, Kbps: 1000, ShortPreamble: true}, MCS(32, false, false), {}}
	for _, r := range bad {
		if err := r.Validate(); !errors.Is(err, ErrInvalidRate) {
			t.Errorf("%v: got %v, want ErrInvalidRate", r, err)
		}
		if got := FiveGHz().TxTime(r, 100); got != 0 && r.Mod != CCK {
			t.Errorf("%v: TxTime = %d for an invalid rate", r, got)
		}
	}
	if got := FiveGHz().TxTime(MCS(0, false, false), -1); got != 0 {
		t.Errorf("negative length: %d", got)
	}
}

func TestNominalRates(t *testing.T) {
	// Table 19-27..: MCS7 HT20 LGI 65 Mb/s, SGI 72.2; MCS15 HT40 SGI 300;
	// MCS31 HT40 SGI 600.
	for _, c := range []struct {
		r    Rate
		want uint32
	}{
		{MCS(7, false, false), 65000},
		{MCS(7, false, true), 72222},
		{MCS(15, true, true), 300000},
		{MCS(31, true, true), 600000},
		{Legacy(54000), 54000},
	} {
		if got := c.r.KbpsNominal(); got != c.want {
			t.Errorf("%v: %d kb/s, want %d", c.r, got, c.want)
		}
	}
}

// TestMonotone checks two structural properties over every HT rate: more
// bytes never take less time, and SGI is never slower than LGI.
func TestMonotone(t *testing.T) {
	p := FiveGHz()
	for mcs := uint8(0); mcs < 32; mcs++ {
		for _, w := range []bool{false, true} {
			prev := 0
			for l := 0; l <= 65535; l += 997 {
				lg := p.TxTime(MCS(mcs, w, false), l)
				sg := p.TxTime(MCS(mcs, w, true), l)
				if lg < prev || sg > lg {
					t.Fatalf("MCS%d w40=%v len %d: lgi %d sgi %d prev %d", mcs, w, l, lg, sg, prev)
				}
				prev = lg
			}
		}
	}
}
