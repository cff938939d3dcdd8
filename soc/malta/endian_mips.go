package malta

// le32 and le16 return the value a store must write for a little-endian
// register to read v: byte-swapped on this big-endian CPU.
//
//go:nosplit
func le32(v uint32) uint32 { return v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24 }

//go:nosplit
func le16(v uint16) uint16 { return v>>8 | v<<8 }
