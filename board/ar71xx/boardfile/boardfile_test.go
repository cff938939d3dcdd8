package boardfile

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/board"
)

// TestBoardsValid: every shipped description passes Validate, and the
// names are unique.
func TestBoardsValid(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range All {
		if err := b.Validate(); err != nil {
			t.Errorf("%v", err)
		}
		if seen[b.Name] {
			t.Errorf("two boards named %s", b.Name)
		}
		seen[b.Name] = true
		if got, err := Lookup(b.Name); err != nil || got != b {
			t.Errorf("Lookup(%s) = %v, %v", b.Name, got, err)
		}
	}
	if _, err := Lookup("tl-wr703n"); err == nil {
		t.Fatal("Lookup of an unknown board succeeded")
	}
}

// TestValidateRefuses: each kind of inconsistency is caught with
// ErrInvalid, checked on copies of a good description.
func TestValidateRefuses(t *testing.T) {
	cases := map[string]func(b *Board){
		"overlap": func(b *Board) { b.Flash.Parts[1].Size += 0x10000 },
		"outside": func(b *Board) { b.Flash.Parts[3].Offset += 0x10000 },
		"no config": func(b *Board) {
			b.Flash.Parts = append(b.Flash.Parts[:2:2], b.Flash.Parts[3])
		},
		"art writable":  func(b *Board) { b.Flash.Parts[3].ReadOnly = false },
		"unused unit":   func(b *Board) { b.Ports[0].Unit = 1 },
		"vlan missing":  func(b *Board) { b.Ports[1].SwitchPorts = []int{3} },
		"wan first":     func(b *Board) { b.Ports[0].Role, b.Ports[1].Role = board.WAN, board.LAN },
		"no hwid":       func(b *Board) { b.Image.TPLinkHWID = 0 },
		"flash size":    func(b *Board) { b.Flash.Size = 3 << 20 },
		"mac partition": func(b *Board) { b.MACAddr.Part = "nvram" },
	}
	for name, mutate := range cases {
		b := *TLWDR4300
		b.Flash.Parts = append([]Partition(nil), TLWDR4300.Flash.Parts...)
		b.Ports = append([]Port(nil), TLWDR4300.Ports...)
		mutate(&b)
		if err := b.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", name, err)
		}
	}
}
