package idle

import "testing"

// Decode the branches in Code and check that they land where the layout
// says: the window's branch exits one word past the window's end (so it
// never lands on the WAIT's return address), the WAIT is the window's last
// instruction and a nop follows it, and the loops go back to the start.
func TestCodeLayout(t *testing.T) {
	const (
		opBEQ  = 0x04
		opBNE  = 0x05
		wait   = 0x42000020
		mtc0IE = 0x40836000
	)
	target := func(i int) int {
		off := int(int16(Code[i] & 0xffff))
		return (i + 1 + off) * 4
	}
	win := WindowOffset / 4
	if Code[win] != mtc0IE {
		t.Fatalf("window does not start with the interrupt-enabling mtc0: %#x", Code[win])
	}
	if Code[win+3] != wait {
		t.Fatalf("WAIT is not the window's last instruction: %#x", Code[win+3])
	}
	if op := Code[win+1] >> 26; op != opBNE {
		t.Fatalf("window branch opcode %#x, want bne", op)
	}
	if Code[win+4] != 0 {
		t.Fatalf("the WAIT's return address holds %#x, want a nop", Code[win+4])
	}
	if got := target(win + 1); got != WindowOffset+WindowSize+4 {
		t.Fatalf("window branch lands at %d, want past the window end, %d", got, WindowOffset+WindowSize+4)
	}
	var loops int
	for i, w := range Code {
		if w>>26 == opBEQ {
			if got := target(i); got != 0 {
				t.Errorf("beq at +%d goes to %d, want 0", i*4, got)
			}
			loops++
		}
	}
	if loops != 2 {
		t.Fatalf("found %d loop branches, want 2", loops)
	}
	if Code[len(Code)-1] != 0 || Code[len(Code)-2]>>26 != opBEQ {
		t.Fatal("code must end with the loop branch and its delay slot")
	}
}

func TestPlacement(t *testing.T) {
	for base := uintptr(0x80000300); base < 0x80000320; base += 4 {
		start, win := Placement(base)
		if start < base || win%WindowSize != 0 || win-start != WindowOffset || start-base >= WindowSize {
			t.Fatalf("Placement(%#x) = %#x, %#x", base, start, win)
		}
	}
}
