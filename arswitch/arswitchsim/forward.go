package arswitchsim

import (
	"encoding/binary"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// SetEgress sets the function receiving frames leaving port p (nil drops
// them). The frame is valid only during the call.
func (s *Switch) SetEgress(p int, fn func(frame []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.egress[p] = fn
}

// SetLink plugs (up) or unplugs the cable of port p. Only ports whose
// PORT_STATUS is in auto mode follow the cable; forced ports (the CPU
// port) follow their forced setup.
func (s *Switch) SetLink(p int, up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cable[p] = up
}

type portCfg struct {
	state  int
	learn  bool
	pvid   int
	dest   uint32
	dot1q  int
	egress int // AR8216 family: PORT_CTRL 9:8; AR8327: PORT_VLAN1 out mode 13:12
}

func (s *Switch) portCfg(p int) portCfg {
	if s.v.l27 {
		l := s.regs[a27PortLookup+0xc*uint32(p)]
		v0 := s.regs[a27PortVLAN0+8*uint32(p)]
		v1 := s.regs[a27PortVLAN1+8*uint32(p)]
		return portCfg{state: int(l>>16) & 7, learn: l&a27LookupLearn != 0,
			pvid: int(v0>>16) & 0xfff, dest: l & 0x7f, dot1q: int(l>>8) & 3,
			egress: int(v1>>12) & 3}
	}
	c := s.regs[a16PortCtrl+a16Stride*uint32(p)]
	v := s.regs[a16PortVLAN+a16Stride*uint32(p)]
	pvid := int(v & 0xfff)
	if s.v.vlan2 {
		v = s.regs[a16PortVLAN2+a16Stride*uint32(p)]
	}
	return portCfg{state: int(c & 7), learn: c&(1<<14) != 0, pvid: pvid,
		dest: v >> 16 & 0x3f, dot1q: int(v >> 30), egress: int(c>>8) & 3}
}

// canRx / canTx: the port's MAC is up in that direction.
func (s *Switch) canRx(p int) bool {
	st := s.status(p)
	return st&stLinkUp != 0 && st&stRXMAC != 0
}

func (s *Switch) canTx(p int) bool {
	st := s.status(p)
	return st&stLinkUp != 0 && st&stTXMAC != 0
}

func (s *Switch) mtu() int {
	if s.v.l27 {
		return int(s.regs[a27MaxFrame] & 0x3fff)
	}
	return int(s.regs[a16GlobalCtrl] & 0x7fff)
}

// Inject delivers frame (destination MAC first, no FCS) into port p, and
// synchronously forwards it to the egress functions of the output ports.
// It allocates nothing.
func (s *Switch) Inject(p int, frame []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clk.Now()
	s.complete(now)
	if p < 0 || p >= s.v.nports || s.rst.on || !s.canRx(p) {
		return
	}
	mib := s.mibEnabled()
	if len(frame) < 14 {
		if mib {
			s.count(p, cRxRunt, 1)
		}
		return
	}
	if len(frame)+4 > s.mtu() {
		if mib {
			s.count(p, cRxTooLong, 1)
		}
		return
	}
	var dst, src [6]byte
	copy(dst[:], frame[0:6])
	copy(src[:], frame[6:12])
	if mib {
		s.count(p, cRxGoodByte, uint64(len(frame)+4))
		switch {
		case dst == [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}:
			s.count(p, cRxBroad, 1)
		case dst[0]&1 != 0:
			s.count(p, cRxMulti, 1)
		default:
			s.count(p, cRxUnicast, 1)
		}
	}
	in := s.portCfg(p)
	if in.state != stateForward && in.state != stateLearn {
		s.filtered(p, mib)
		return
	}
	tagged := len(frame) >= 18 && binary.BigEndian.Uint16(frame[12:]) == 0x8100
	vid := in.pvid
	if tagged && in.dot1q != dot1qPortOnly {
		if tv := int(binary.BigEndian.Uint16(frame[14:]) & 0xfff); tv != 0 {
			vid = tv
		}
	}
	cand := in.dest
	var modes uint32
	vtuHit := false
	if in.dot1q != dot1qPortOnly {
		members, m, ok := s.vtuLookup(vid)
		switch {
		case ok:
			if in.dot1q == dot1qSecure && members&(1<<p) == 0 {
				s.filtered(p, mib)
				return
			}
			// model: VTU members ANDed with the port-VLAN mask.
			cand = members & in.dest
			modes, vtuHit = m, true
		case in.dot1q != dot1qFallback:
			s.filtered(p, mib)
			return
		}
	}
	// model: the AR8327 learns per VID (IVL), the AR8216 family shares
	// one table (its ATU entries have no VID).
	key := uint16(0)
	if s.v.l27 {
		key = uint16(vid)
	}
	if in.learn && src[0]&1 == 0 && src != ([6]byte{}) {
		s.learn(&src, key, p, now)
	}
	if in.state != stateForward {
		return
	}
	var out uint32
	uc, mc := s.floodMasks()
	switch {
	case dst == [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}:
		out = cand // model: broadcast floods to every candidate port
	case dst[0]&1 != 0:
		out = cand & mc
	default:
		if e := s.lookup(&dst, key, now); e != nil {
			out = cand & uint32(e.ports)
		} else {
			out = cand & uc
		}
	}
	out &^= 1 << p
	if out == 0 {
		s.filtered(p, mib)
		return
	}
	for e := 0; e < s.v.nports; e++ {
		if out&(1<<e) == 0 || !s.canTx(e) || s.portCfg(e).state != stateForward {
			continue
		}
		s.emit(e, frame, tagged, vid, s.egressAction(e, vtuHit, modes), mib)
	}
}

func (s *Switch) filtered(p int, mib bool) {
	if mib {
		s.count(p, cFiltered, 1)
	}
}

func (s *Switch) floodMasks() (uc, mc uint32) {
	if s.v.l27 {
		v := s.regs[a27FwdCtrl1]
		return v & 0x7f, v >> 8 & 0x7f
	}
	v := s.regs[a16FloodMask]
	return v & 0x3f, v >> 16 & 0x3f
}

const (
	actKeep = iota
	actUntag
	actTag
	actDouble
)

func (s *Switch) egressAction(e int, vtuHit bool, modes uint32) int {
	mode := s.portCfg(e).egress
	if !s.v.l27 {
		return mode // 0 keep, 1 strip, 2 add, 3 double tag
	}
	switch mode {
	case 1:
		return actUntag
	case 2:
		return actTag
	case 3:
		return actKeep
	}
	// Port says "unmodified": the VTU entry decides per port.
	if !vtuHit {
		return actKeep
	}
	switch (modes >> (2 * e)) & 3 {
	case 1:
		return actUntag
	case 2:
		return actTag
	}
	return actKeep
}

func (s *Switch) emit(e int, frame []byte, tagged bool, vid int, act int, mib bool) {
	b := s.scratch[:0]
	switch {
	case act == actUntag && tagged:
		b = append(b, frame[:12]...)
		b = append(b, frame[16:]...)
	case act == actTag && !tagged, act == actDouble:
		b = append(b, frame[:12]...)
		b = append(b, 0x81, 0x00, byte(vid>>8)&0x0f, byte(vid))
		b = append(b, frame[12:]...)
	default:
		b = append(b, frame...)
		if tagged && act != actUntag && binary.BigEndian.Uint16(b[14:])&0xfff == 0 {
			// Priority-tagged frame leaving tagged: give it its VLAN.
			b[14] = b[14]&0xf0 | byte(vid>>8)&0x0f
			b[15] = byte(vid)
		}
	}
	s.scratch = b[:0]
	if mib {
		s.count(e, cTxByte, uint64(len(b)+4))
		switch {
		case b[0] == 0xff && b[1] == 0xff && b[2] == 0xff && b[3] == 0xff && b[4] == 0xff && b[5] == 0xff:
			s.count(e, cTxBroad, 1)
		case b[0]&1 != 0:
			s.count(e, cTxMulti, 1)
		default:
			s.count(e, cTxUnicast, 1)
		}
	}
	if fn := s.egress[e]; fn != nil {
		fn(b)
	}
}

// Advance moves the model's clock (aging).
func (s *Switch) Advance(d time.Duration) { s.clk.Sleep(d) }

// Snapshot is the complete programmable state of the model: registers,
// VLAN table and static address entries (learned entries and counters are
// traffic, not configuration).
type Snapshot struct {
	Regs   map[uint32]uint32
	VLANs  []VLAN
	Static []ATUEntry
	Page   [2]uint32 // not compared by Diff: page selection is bus state
}

// Snapshot captures the model's configuration state.
func (s *Switch) Snapshot() Snapshot {
	vl := s.VLANs()
	var st []ATUEntry
	for _, e := range s.ATU() {
		if e.Static {
			st = append(st, e)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{Regs: maps.Clone(s.regs), VLANs: vl, Static: st}
}

// Diff describes how b differs from a ("" if equal).
func (a Snapshot) Diff(b Snapshot) string {
	var d []string
	keys := slices.Collect(maps.Keys(a.Regs))
	for k := range b.Regs {
		if _, ok := a.Regs[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		if a.Regs[k] != b.Regs[k] {
			d = append(d, fmt.Sprintf("reg %#x: %#08x -> %#08x", k, a.Regs[k], b.Regs[k]))
		}
	}
	if !reflect.DeepEqual(a.VLANs, b.VLANs) {
		d = append(d, fmt.Sprintf("VTU: %+v -> %+v", a.VLANs, b.VLANs))
	}
	if !reflect.DeepEqual(a.Static, b.Static) {
		d = append(d, fmt.Sprintf("static ATU: %+v -> %+v", a.Static, b.Static))
	}
	return strings.Join(d, "\n")
}

// Recorder collects copies of the frames leaving ports (a test helper; it
// allocates per frame, the model does not).
type Recorder struct {
	mu     sync.Mutex
	frames [8][][]byte
}

// Record attaches r to every port of s.
func (r *Recorder) Record(s *Switch) {
	for p := 0; p < s.v.nports; p++ {
		p := p
		s.SetEgress(p, func(f []byte) {
			r.mu.Lock()
			r.frames[p] = append(r.frames[p], append([]byte(nil), f...))
			r.mu.Unlock()
		})
	}
}

// Take returns and forgets the frames that left port p.
func (r *Recorder) Take(p int) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.frames[p]
	r.frames[p] = nil
	return f
}

// Reset forgets all recorded frames.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frames = [8][][]byte{}
}
