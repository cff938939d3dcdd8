package kernel

import "testing"

// TestMapTooLarge: the runtime's 4 MiB heap step is admitted on a 16 MiB
// board with almost no RAM free (the check is against total RAM, as
// Linux's OVERCOMMIT_GUESS), a mapping larger than all RAM is not, and a
// mapping over writable pages is charged only for what it adds.
func TestMapTooLarge(t *testing.T) {
	const ram16 = 16 << 20 >> pageShiftAll
	for _, c := range []struct {
		newW, oldW, ram uint32
		want            bool
	}{
		{newW: 4 << 20 >> pageShiftAll, ram: ram16, want: false}, // mheap.grow's step
		{newW: ram16, ram: ram16, want: false},
		{newW: ram16 + 1, ram: ram16, want: true},
		{newW: ram16 + 1, oldW: 1, ram: ram16, want: false}, // replacing a writable page
		{newW: 0, oldW: ram16 * 2, ram: ram16, want: false}, // PROT_NONE over a heap
		{newW: ^uint32(0), ram: ram16, want: true},
	} {
		if got := mapTooLarge(c.newW, c.oldW, c.ram); got != c.want {
			t.Errorf("mapTooLarge(%d, %d, %d) = %v, want %v", c.newW, c.oldW, c.ram, got, c.want)
		}
	}
}

// TestMayPageIn: the last pageInReserve frames are for page tables.
func TestMayPageIn(t *testing.T) {
	if mayPageIn(pageInReserve) {
		t.Error("a demand-zero page took a reserved frame")
	}
	if !mayPageIn(pageInReserve + 1) {
		t.Error("a demand-zero page was refused with a frame above the reserve free")
	}
	if mayPageIn(0) {
		t.Error("a demand-zero page was admitted with no frame free")
	}
}

func TestGoMemLimitEnv(t *testing.T) {
	for _, c := range []struct {
		pages uint32
		want  string
	}{
		{0, "GOMEMLIMIT=0"},
		{8, "GOMEMLIMIT=28672"},     // 7 of 8 pages
		{800, "GOMEMLIMIT=2867200"}, // a 16 MiB board's 3.1 MiB free
		{65536, "GOMEMLIMIT=234881024"},
	} {
		var buf [32]byte
		n := goMemLimitEnv(&buf, c.pages)
		if got := string(buf[:n]); got != c.want {
			t.Errorf("%d pages: %q, want %q", c.pages, got, c.want)
		}
	}
}
