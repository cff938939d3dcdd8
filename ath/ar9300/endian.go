package ar9300

import "encoding/binary"

// cpuBigEndian selects the AR_CFG descriptor swap (ath9k hw.c sets
// AR_CFG_SWTD | AR_CFG_SWRD on big-endian hosts).
var cpuBigEndian = binary.NativeEndian.Uint16([]byte{1, 0}) != 1
