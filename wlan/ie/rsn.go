package ie

import "encoding/binary"

// Suite is a cipher or AKM suite selector: OUI in the top three bytes,
// suite type in the low byte (802.11-2016 9.4.2.25.2, .3).
type Suite uint32

// Suite selectors with the IEEE OUI 00-0F-AC (802.11-2016 Tables 9-131,
// 9-133).
const (
	CipherUseGroup Suite = 0x000fac00
	CipherWEP40    Suite = 0x000fac01
	CipherTKIP     Suite = 0x000fac02
	CipherCCMP128  Suite = 0x000fac04
	CipherWEP104   Suite = 0x000fac05
	CipherBIPCMAC  Suite = 0x000fac06
	CipherGCMP128  Suite = 0x000fac08
	CipherGCMP256  Suite = 0x000fac09
	CipherCCMP256  Suite = 0x000fac0a

	AKM8021X       Suite = 0x000fac01
	AKMPSK         Suite = 0x000fac02
	AKMFT8021X     Suite = 0x000fac03
	AKMFTPSK       Suite = 0x000fac04
	AKM8021XSHA256 Suite = 0x000fac05
	AKMPSKSHA256   Suite = 0x000fac06
	AKMSAE         Suite = 0x000fac08
)

// RSN capability bits (802.11-2016 9.4.2.25.4).
const (
	RSNCapPreauth      uint16 = 0x0001
	RSNCapNoPairwise   uint16 = 0x0002
	RSNCapMFPRequired  uint16 = 0x0040
	RSNCapMFPCapable   uint16 = 0x0080
	RSNCapPTKSAReplay4 uint16 = 0x0008 // PTKSA replay counter field (bits 2-3) = 2: four counters
)

// Bounds of what ParseRSN accepts: more entries than these are an error
// rather than silently dropped, so a station's RSN element is either
// understood whole or refused.
const (
	MaxPairwise = 4
	MaxAKMs     = 4
	MaxPMKIDs   = 4
	PMKIDLen    = 16
	rsnVersion  = 1
)

// RSN is a parsed RSN element. Absent optional fields take the defaults
// 9.4.2.25.1 gives (CCMP-128 group and pairwise, 802.1X AKM); the Has
// fields say which were present.
type RSN struct {
	Version         uint16
	Group           Suite
	pairwise        [MaxPairwise]Suite
	NPairwise       int
	akms            [MaxAKMs]Suite
	NAKMs           int
	Capabilities    uint16
	HasCapabilities bool
	pmkids          [MaxPMKIDs][PMKIDLen]byte
	NPMKIDs         int
	GroupMgmt       Suite
	HasGroupMgmt    bool
}

// Pairwise returns the pairwise cipher suites.
func (r *RSN) Pairwise() []Suite { return r.pairwise[:r.NPairwise] }

// AKMs returns the AKM suites.
func (r *RSN) AKMs() []Suite { return r.akms[:r.NAKMs] }

// PMKIDs returns the PMKIDs.
func (r *RSN) PMKIDs() [][PMKIDLen]byte { return r.pmkids[:r.NPMKIDs] }

// SetPairwise sets the pairwise suites; extra ones beyond MaxPairwise are
// dropped.
func (r *RSN) SetPairwise(s ...Suite) { r.NPairwise = copy(r.pairwise[:], s) }

// SetAKMs sets the AKM suites; extra ones beyond MaxAKMs are dropped.
func (r *RSN) SetAKMs(s ...Suite) { r.NAKMs = copy(r.akms[:], s) }

// AddPMKID appends a PMKID; false when MaxPMKIDs are already there.
func (r *RSN) AddPMKID(id [PMKIDLen]byte) bool {
	if r.NPMKIDs == MaxPMKIDs {
		return false
	}
	r.pmkids[r.NPMKIDs] = id
	r.NPMKIDs++
	return true
}

// HasPairwise reports whether s is one of the pairwise suites.
func (r *RSN) HasPairwise(s Suite) bool {
	for _, p := range r.Pairwise() {
		if p == s {
			return true
		}
	}
	return false
}

// HasAKM reports whether s is one of the AKM suites.
func (r *RSN) HasAKM(s Suite) bool {
	for _, p := range r.AKMs() {
		if p == s {
			return true
		}
	}
	return false
}

// ParseRSN parses an RSN element body.
func ParseRSN(body []byte) (RSN, error) {
	r := RSN{Group: CipherCCMP128}
	if len(body) < 2 {
		return RSN{}, ErrLength
	}
	r.Version = binary.LittleEndian.Uint16(body)
	if r.Version != rsnVersion {
		return RSN{}, ErrValue
	}
	b := body[2:]
	r.pairwise[0], r.NPairwise = CipherCCMP128, 1
	r.akms[0], r.NAKMs = AKM8021X, 1
	if len(b) == 0 {
		return r, nil
	}
	if len(b) < 4 {
		return RSN{}, ErrLength
	}
	r.Group = Suite(binary.BigEndian.Uint32(b))
	b = b[4:]
	var err error
	if len(b) == 0 {
		return r, nil
	}
	if b, r.NPairwise, err = suiteList(b, r.pairwise[:]); err != nil {
		return RSN{}, err
	}
	if len(b) == 0 {
		return r, nil
	}
	if b, r.NAKMs, err = suiteList(b, r.akms[:]); err != nil {
		return RSN{}, err
	}
	if len(b) == 0 {
		return r, nil
	}
	if len(b) < 2 {
		return RSN{}, ErrLength
	}
	r.Capabilities, r.HasCapabilities = binary.LittleEndian.Uint16(b), true
	b = b[2:]
	if len(b) == 0 {
		return r, nil
	}
	if len(b) < 2 {
		return RSN{}, ErrLength
	}
	n := int(binary.LittleEndian.Uint16(b))
	b = b[2:]
	if n*PMKIDLen > len(b) {
		return RSN{}, ErrCount
	}
	if n > MaxPMKIDs {
		return RSN{}, ErrTooMany
	}
	for i := range n {
		copy(r.pmkids[i][:], b[i*PMKIDLen:])
	}
	r.NPMKIDs = n
	b = b[n*PMKIDLen:]
	if len(b) == 0 {
		return r, nil
	}
	if len(b) < 4 {
		return RSN{}, ErrLength
	}
	r.GroupMgmt, r.HasGroupMgmt = Suite(binary.BigEndian.Uint32(b)), true
	// Octets after the group management cipher are left for future
	// extensions, which receivers ignore.
	return r, nil
}

// suiteList reads a 2-octet count and that many 4-octet suites into dst.
func suiteList(b []byte, dst []Suite) ([]byte, int, error) {
	if len(b) < 2 {
		return nil, 0, ErrLength
	}
	n := int(binary.LittleEndian.Uint16(b))
	b = b[2:]
	if n*4 > len(b) {
		return nil, 0, ErrCount
	}
	if n > len(dst) {
		return nil, 0, ErrTooMany
	}
	if n == 0 {
		return nil, 0, ErrValue // a present list must name at least one suite
	}
	for i := range n {
		dst[i] = Suite(binary.BigEndian.Uint32(b[i*4:]))
	}
	return b[n*4:], n, nil
}

// AppendRSN appends an RSN element with every field up to the
// capabilities, then the PMKID list and group management cipher when set.
func AppendRSN(dst []byte, r *RSN) []byte {
	n := 2 + 4 + 2 + 4*r.NPairwise + 2 + 4*r.NAKMs + 2
	if r.NPMKIDs > 0 || r.HasGroupMgmt {
		n += 2 + PMKIDLen*r.NPMKIDs
	}
	if r.HasGroupMgmt {
		n += 4
	}
	dst = appendHeader(dst, IDRSN, n)
	dst = binary.LittleEndian.AppendUint16(dst, rsnVersion)
	dst = binary.BigEndian.AppendUint32(dst, uint32(r.Group))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(r.NPairwise))
	for _, s := range r.Pairwise() {
		dst = binary.BigEndian.AppendUint32(dst, uint32(s))
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(r.NAKMs))
	for _, s := range r.AKMs() {
		dst = binary.BigEndian.AppendUint32(dst, uint32(s))
	}
	dst = binary.LittleEndian.AppendUint16(dst, r.Capabilities)
	if r.NPMKIDs > 0 || r.HasGroupMgmt {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(r.NPMKIDs))
		for _, id := range r.PMKIDs() {
			dst = append(dst, id[:]...)
		}
	}
	if r.HasGroupMgmt {
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.GroupMgmt))
	}
	return dst
}
