package arswitch

// Board wirings the tests program the chips for: the shapes of the
// reference boards whose profiles live in board/ar71xx/profiles (an
// internal test cannot import that package, which imports this one).
var (
	// AR8327 on port 0 over RGMII with TX delay 1 and RX delay 2,
	// open-drain LEDs (DB120's shape).
	testDB120 = Board{
		Name: "DB120",
		CPU:  []CPUPort{{Port: 0, Mode: ModeRGMII, TXDelay: delay(1), RXDelay: delay(2)}},
		LEDs: &LEDConfig{Ctrl: [4]uint32{0x00000000, 0xc737c737, 0x00000000, 0x00c30c00}, OpenDrain: true},
	}
	// AR8327 on port 0 over RGMII and GMAC6 over SGMII (AP135's shape).
	testAP135 = Board{
		Name: "AP135",
		CPU: []CPUPort{
			{Port: 0, Mode: ModeRGMII, TXDelay: delay(1), RXDelay: delay(2)},
			{Port: 6, Mode: ModeSGMII},
		},
	}
	// AR8327 over RGMII, port 1 labelled WAN (TL-WDR4300's shape).
	testTLWDR4300 = Board{
		Name:   "TL-WDR4300",
		CPU:    []CPUPort{{Port: 0, Mode: ModeRGMII, TXDelay: delay(1), RXDelay: delay(2)}},
		Labels: []string{"cpu", "wan", "lan1", "lan2", "lan3", "lan4", ""},
		LEDs:   &LEDConfig{Ctrl: [4]uint32{0xc737c737, 0x00000000, 0x00000000, 0x0030c300}},
	}
)
