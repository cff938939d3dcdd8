//go:build !mips && !mipsle

package boottest

import (
	"bufio"
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// insnRE matches one disassembled instruction: address, raw word, mnemonic
// and operands (objdump -d with raw instructions).
var insnRE = regexp.MustCompile(`^\s*([0-9a-f]+):\s+([0-9a-f]{8})\s+(\S+)\s*(.*)$`)

type insn struct {
	addr, word, op, args string
	fn                   string
}

// disassembleRaw returns every instruction of img in address order, with
// the function it belongs to.
func disassembleRaw(t *testing.T, img string) []insn {
	t.Helper()
	out, err := exec.Command("mips-linux-gnu-objdump", "-d", img).Output()
	if err != nil {
		t.Fatalf("mips-linux-gnu-objdump (binutils-mips-linux-gnu): %v", err)
	}
	var ins []insn
	fn := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := funcRE.FindStringSubmatch(l); m != nil {
			fn = m[2]
			continue
		}
		if m := insnRE.FindStringSubmatch(l); m != nil {
			ins = append(ins, insn{addr: m[1], word: m[2], op: m[3], args: strings.TrimSpace(m[4]), fn: fn})
		}
	}
	return ins
}

// checkEret reports every ERET not preceded by EHB and followed by a NOP,
// the sequence kernel/asm_mipsx.s's ERET macro emits for the MIPS 24K
// (see its comment), and returns how many ERETs it saw.
func checkEret(ins []insn) (n int, bad []string) {
	for i, in := range ins {
		if in.word != "42000018" {
			continue
		}
		n++
		if i == 0 || ins[i-1].word != "000000c0" {
			bad = append(bad, in.fn+" "+in.addr+": eret without ehb before it")
		}
		if i+1 >= len(ins) || ins[i+1].word != "00000000" {
			bad = append(bad, in.fn+" "+in.addr+": eret without nop after it")
		}
	}
	return n, bad
}

// TestEretSequence: every ERET in linked images (both byte orders, and the
// AR71xx board whose cores are the 24K/74K the sequence is for) is
// EHB; ERET; NOP, and Entry sets Config.K0 through setCacheK0's kseg1
// alias, which writes Config and returns with JR.HB.
func TestEretSequence(t *testing.T) {
	for _, board := range append(append([]string(nil), arches...), "ar71xx") {
		t.Run(board, func(t *testing.T) {
			ins := disassembleRaw(t, buildImage(t, board, "./examples/hello"))
			n, bad := checkEret(ins)
			for _, b := range bad {
				t.Error(b)
			}
			if n < 3 {
				t.Errorf("%d erets in the image; the kernel has at least 3 (refill, fast and slow trap return)", n)
			}
			var k0 []insn
			for _, in := range ins {
				if in.fn == "github.com/gowrt/gowrt/kernel.setCacheK0" {
					k0 = append(k0, in)
				}
			}
			var ops []string
			for _, in := range k0 {
				ops = append(ops, in.op)
			}
			got := strings.Join(ops, " ")
			if !strings.Contains(got, "mtc0 ehb jr.hb nop") || !strings.Contains(got, "ori") || len(k0) == 0 ||
				!strings.Contains(k0[0].args, "c0_config") {
				t.Errorf("setCacheK0 is %q, want Config read, K0 set, mtc0, ehb, jr.hb", got)
			}
		})
	}
	// The checker must be able to fail.
	if _, bad := checkEret([]insn{{word: "00000000"}, {word: "42000018"}, {word: "00000000"}}); len(bad) != 1 {
		t.Fatalf("checkEret accepted an eret without ehb: %v", bad)
	}
	if _, bad := checkEret([]insn{{word: "000000c0"}, {word: "42000018"}, {word: "8f480498"}}); len(bad) != 1 {
		t.Fatalf("checkEret accepted an eret without nop: %v", bad)
	}
}
