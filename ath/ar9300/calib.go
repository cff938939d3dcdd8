package ar9300

// Baseband and radio initialisation is out of scope for this driver (see
// the package documentation): a real chip needs the full initvals tables
// written at reset, per band and width, before it can transmit or
// receive. They are kept here as data, not code, with their source, to be
// extended and applied by the reset sequence when there is hardware to
// test it on. The values are register facts of the AR9340 (Wasp) 1.0 from
// Linux drivers/net/wireless/ath/ath9k/ar9340_initvals.h; the AR9300 2.2
// (AR9380) and QCA955x tables live in ar9003_2p2_initvals.h and
// ar955x_1p0_initvals.h and are not extracted yet.

// ModeValues is one register of a per-mode table: its value in each of
// the four modes, in the initvals column order.
type ModeValues struct {
	Reg                                uint32
	HT20_5G, HT40_5G, HT40_2G, HT20_2G uint32
}

// RegValue is one register of an all-modes table.
type RegValue struct {
	Reg, Val uint32
}

// AR9340RadioPostamble is ar9340_1p0_radio_postamble.
var AR9340RadioPostamble = []ModeValues{
	{0x000160ac, 0xa4646800, 0xa4646800, 0xa4646800, 0xa4646800},
	{0x0001610c, 0x08000000, 0x00000000, 0x00000000, 0x00000000},
	{0x00016140, 0x10804000, 0x10804000, 0x50804000, 0x50804000},
	{0x0001650c, 0x08000000, 0x00000000, 0x00000000, 0x00000000},
	{0x00016540, 0x10804000, 0x10804000, 0x50804000, 0x50804000},
}

// AR9340RadioCore40M is ar9340_1p0_radio_core_40M: the radio settings for
// a 40 MHz reference clock, applied after the core table.
var AR9340RadioCore40M = []RegValue{
	{0x0001609c, 0x02566f3a},
	{0x000160ac, 0xa4647c00},
	{0x000160b0, 0x01885f5a},
	{0x00008244, 0x0010f400},
	{0x0000824c, 0x0001e800},
}
