package arswitchsim

import (
	"time"
)

// atuEntry is one address-table slot.
type atuEntry struct {
	used   bool
	static bool
	mac    [6]byte
	vid    uint16 // AR8327 only; 0 on the AR8216 family (shared learning)
	ports  uint8
	seen   time.Duration
}

// atuTable is a 4-way set-associative table. model: the set count and
// the hash are this package's, not the chips' (no upstream source gives
// them); a full set refuses to learn, as real hash tables do.
type atuTable struct {
	slots []atuEntry
	sets  int
}

const atuWays = 4

func (t *atuTable) init(sets int) {
	t.sets = sets
	t.slots = make([]atuEntry, sets*atuWays)
}

func (t *atuTable) set(mac *[6]byte, vid uint16) int {
	h := uint32(vid) * 0x9e37
	for _, b := range mac {
		h = h*31 + uint32(b)
	}
	h ^= h >> 11
	return int(h) & (t.sets - 1)
}

func (t *atuTable) find(mac *[6]byte, vid uint16) int {
	base := t.set(mac, vid) * atuWays
	for i := base; i < base+atuWays; i++ {
		e := &t.slots[i]
		if e.used && e.mac == *mac && e.vid == vid {
			return i
		}
	}
	return -1
}

// insert returns the slot for (mac, vid), allocating one; -1 when the set
// is full.
func (t *atuTable) insert(mac *[6]byte, vid uint16) int {
	if i := t.find(mac, vid); i >= 0 {
		return i
	}
	base := t.set(mac, vid) * atuWays
	for i := base; i < base+atuWays; i++ {
		if !t.slots[i].used {
			t.slots[i] = atuEntry{used: true, mac: *mac, vid: vid}
			return i
		}
	}
	return -1
}

func (t *atuTable) clear(match func(*atuEntry) bool) {
	for i := range t.slots {
		if t.slots[i].used && match(&t.slots[i]) {
			t.slots[i] = atuEntry{}
		}
	}
}

// ageTime returns the configured aging period, 0 when aging is off.
func (s *Switch) ageTime() time.Duration {
	if s.v.l27 {
		return time.Duration(s.regs[a27ATUCtrl]&0xffff) * AgeUnit
	}
	v := s.regs[a16ATUCtrl]
	if v&a16AgeEn == 0 {
		return 0
	}
	return time.Duration(v&0xffff) * AgeUnit
}

// lookup finds a live entry, expiring it if it has aged out.
func (s *Switch) lookup(mac *[6]byte, vid uint16, now time.Duration) *atuEntry {
	i := s.atuT.find(mac, vid)
	if i < 0 {
		return nil
	}
	e := &s.atuT.slots[i]
	if !e.static {
		if age := s.ageTime(); age > 0 && now-e.seen > age {
			*e = atuEntry{}
			return nil
		}
	}
	return e
}

func (s *Switch) learn(mac *[6]byte, vid uint16, port int, now time.Duration) {
	if e := s.lookup(mac, vid, now); e != nil && e.static {
		return
	}
	i := s.atuT.insert(mac, vid)
	if i < 0 {
		return
	}
	e := &s.atuT.slots[i]
	e.ports = 1 << port
	e.seen = now
}

func (s *Switch) ageStatus(e *atuEntry, now time.Duration) uint32 {
	if e.static {
		return 0xf
	}
	age := s.ageTime()
	if age <= 0 {
		return 7
	}
	st := 7 - int64(now-e.seen)*7/int64(age)
	return uint32(max(st, 1))
}

// doATU executes an address-table operation.
func (s *Switch) doATU(cmd uint32, now time.Duration) {
	op := cmd & 0x7
	if s.v.l27 {
		op = cmd & 0xf
	}
	port := int(cmd>>8) & 0xf
	var mac [6]byte
	var vid uint16
	var ports uint8
	var status uint32
	if s.v.l27 {
		d0, d1, d2 := s.regs[a27ATUData0], s.regs[a27ATUData1], s.regs[a27ATUData2]
		mac = [6]byte{byte(d1 >> 8), byte(d1), byte(d0 >> 24), byte(d0 >> 16), byte(d0 >> 8), byte(d0)}
		vid = uint16(d2>>8) & 0xfff
		ports = uint8(d1>>16) & 0x7f
		status = d2 & 0xf
	} else {
		a, d, c2 := s.regs[a16ATU], s.regs[a16ATUData], s.regs[a16ATUCtrl2]
		mac = [6]byte{byte(d >> 24), byte(d >> 16), byte(d >> 8), byte(d), byte(a >> 24), byte(a >> 16)}
		ports = uint8(c2) & 0x3f
		status = c2 >> 16 & 0xf
	}
	flushStatic := s.v.l27 && cmd&(1<<4) != 0
	switch op {
	case opFlush:
		s.atuT.clear(func(*atuEntry) bool { return true })
	case opFlushLocked:
		s.atuT.clear(func(e *atuEntry) bool { return e.static })
	case opFlushUnicast:
		s.atuT.clear(func(e *atuEntry) bool {
			if e.static && !flushStatic || e.ports&(1<<port) == 0 {
				return false
			}
			e.ports &^= 1 << port
			return e.ports == 0
		})
	case opLoad:
		if status == 0 {
			if i := s.atuT.find(&mac, vid); i >= 0 {
				s.atuT.slots[i] = atuEntry{}
			}
			return
		}
		if i := s.atuT.insert(&mac, vid); i >= 0 {
			e := &s.atuT.slots[i]
			e.ports, e.static, e.seen = ports, status == 0xf, now
		}
	case opPurge:
		if i := s.atuT.find(&mac, vid); i >= 0 {
			s.atuT.slots[i] = atuEntry{}
		}
	case opGetNext:
		start := 0
		if mac != ([6]byte{}) || vid != 0 {
			i := s.atuT.find(&mac, vid)
			if i < 0 {
				s.atuResult(nil, now)
				return
			}
			start = i + 1
		}
		for i := start; i < len(s.atuT.slots); i++ {
			e := &s.atuT.slots[i]
			if e.used && s.lookup(&e.mac, e.vid, now) != nil {
				s.atuResult(e, now)
				return
			}
		}
		s.atuResult(nil, now)
	}
}

func (s *Switch) atuResult(e *atuEntry, now time.Duration) {
	var mac [6]byte
	var vid uint16
	var ports uint8
	var status uint32
	if e != nil {
		mac, vid, ports, status = e.mac, e.vid, e.ports, s.ageStatus(e, now)
	}
	if s.v.l27 {
		s.regs[a27ATUData0] = uint32(mac[2])<<24 | uint32(mac[3])<<16 | uint32(mac[4])<<8 | uint32(mac[5])
		s.regs[a27ATUData1] = uint32(mac[0])<<8 | uint32(mac[1]) | uint32(ports)<<16
		s.regs[a27ATUData2] = status | uint32(vid)<<8
		return
	}
	s.regs[a16ATUData] = uint32(mac[0])<<24 | uint32(mac[1])<<16 | uint32(mac[2])<<8 | uint32(mac[3])
	s.regs[a16ATU] = s.regs[a16ATU]&0xffff | uint32(mac[4])<<24 | uint32(mac[5])<<16
	s.regs[a16ATUCtrl2] = uint32(ports) | status<<16
}

// doVTU executes a VLAN-table operation.
func (s *Switch) doVTU(cmd uint32) {
	op := cmd & 7
	vid := int(cmd>>16) & 0xfff
	if s.v.l27 {
		switch op {
		case opFlush:
			s.vtu27 = [4096]uint32{}
		case opLoad:
			f0 := s.regs[a27VTUFunc0]
			if f0&a27VTUValid == 0 {
				f0 = 0
			}
			s.vtu27[vid] = f0
		case opPurge:
			s.vtu27[vid] = 0
		case opFlushLocked: // remove port
			p := int(cmd>>8) & 0xf
			for i, e := range s.vtu27 {
				if e != 0 {
					s.vtu27[i] = e | 3<<(4+2*p)
				}
			}
		case opFlushUnicast, opGetNext: // get next, get one
			next := vid
			if op == opFlushUnicast {
				next = 0
				for v := vid + 1; v < 4096; v++ {
					if s.vtu27[v] != 0 {
						next = v
						break
					}
				}
			}
			s.regs[a27VTUFunc0] = s.vtu27[next]
			s.regs[a27VTUFunc1] = s.regs[a27VTUFunc1]&^(0xfff<<16) | uint32(next)<<16
		}
		return
	}
	switch op {
	case opFlush:
		s.vtu16 = s.vtu16[:0]
	case opLoad:
		d := s.regs[a16VTUData]
		members := d & (1<<s.v.nports - 1)
		for i := range s.vtu16 {
			if s.vtu16[i].vid == vid {
				if d&a16VTUDataValid == 0 {
					s.vtu16 = append(s.vtu16[:i], s.vtu16[i+1:]...)
				} else {
					s.vtu16[i].members = members
				}
				return
			}
		}
		if d&a16VTUDataValid == 0 {
			return
		}
		if len(s.vtu16) >= s.v.vtuCap {
			s.vtuFullFlag = true
			return
		}
		s.vtu16 = append(s.vtu16, vtu16Entry{vid: vid, members: members})
	case opPurge:
		for i := range s.vtu16 {
			if s.vtu16[i].vid == vid {
				s.vtu16 = append(s.vtu16[:i], s.vtu16[i+1:]...)
				return
			}
		}
	case opFlushLocked: // remove port
		p := int(cmd>>8) & 0xf
		for i := range s.vtu16 {
			s.vtu16[i].members &^= 1 << p
		}
	case opFlushUnicast: // get next
		best := -1
		for i, e := range s.vtu16 {
			if e.vid > vid && (best < 0 || e.vid < s.vtu16[best].vid) {
				best = i
			}
		}
		if best < 0 {
			s.regs[a16VTUData] = 0
			s.regs[a16VTU] &^= 0xfff << 16
			return
		}
		s.regs[a16VTUData] = s.vtu16[best].members | a16VTUDataValid
		s.regs[a16VTU] = s.regs[a16VTU]&^(0xfff<<16) | uint32(s.vtu16[best].vid)<<16
	}
}

// vtuLookup returns (members, per-port egress modes, found) for vid.
// Egress modes are AR8327 2-bit codes (0 unmodified, 1 untag, 2 tag,
// 3 not member); the AR8216 family reports 0 (its tagging is per port).
func (s *Switch) vtuLookup(vid int) (members uint32, modes uint32, ok bool) {
	if s.v.l27 {
		e := s.vtu27[vid&0xfff]
		if e&a27VTUValid == 0 {
			return 0, 0, false
		}
		for p := 0; p < s.v.nports; p++ {
			if (e>>(4+2*p))&3 != 3 {
				members |= 1 << p
			}
		}
		return members, e >> 4, true
	}
	for _, e := range s.vtu16 {
		if e.vid == vid {
			return e.members, 0, true
		}
	}
	return 0, 0, false
}

// VLAN is one VTU entry as the model holds it.
type VLAN struct {
	VID      int
	Members  uint32
	Untagged uint32 // AR8327: ports with egress mode "untag"
	Tagged   uint32 // AR8327: ports with egress mode "tag"
}

// VLANs returns the VTU contents, sorted by VID.
func (s *Switch) VLANs() []VLAN {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.complete(s.clk.Now())
	var out []VLAN
	for vid := 0; vid < 4096; vid++ {
		m, modes, ok := s.vtuLookup(vid)
		if !ok {
			continue
		}
		v := VLAN{VID: vid, Members: m}
		for p := 0; p < s.v.nports && s.v.l27; p++ {
			switch (modes >> (2 * p)) & 3 {
			case 1:
				v.Untagged |= 1 << p
			case 2:
				v.Tagged |= 1 << p
			}
		}
		out = append(out, v)
	}
	return out
}

// ATUEntry is one address-table entry as the model holds it.
type ATUEntry struct {
	MAC    [6]byte
	VID    int
	Ports  uint32
	Static bool
}

// ATU returns the live address-table entries in slot order.
func (s *Switch) ATU() []ATUEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clk.Now()
	s.complete(now)
	var out []ATUEntry
	for i := range s.atuT.slots {
		e := &s.atuT.slots[i]
		if e.used && s.lookup(&e.mac, e.vid, now) != nil {
			out = append(out, ATUEntry{MAC: e.mac, VID: int(e.vid), Ports: uint32(e.ports), Static: e.static})
		}
	}
	return out
}
