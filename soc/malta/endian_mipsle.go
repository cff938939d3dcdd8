package malta

// le32 and le16 return the value a store must write for a little-endian
// register to read v: itself on this little-endian CPU.
//
//go:nosplit
func le32(v uint32) uint32 { return v }

//go:nosplit
func le16(v uint16) uint16 { return v }
