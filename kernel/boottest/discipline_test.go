//go:build !mips && !mipsle

package boottest

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Trap-context discipline: code reachable from the kernel's exception entry
// runs with interrupts off on the kernel stack, so it must not allocate, hit
// a write barrier, panic on a bounds check, or grow its stack; and it must
// not touch the program's data segment (kseg2), which is TLB-mapped and
// could fault while EXL is set. This test disassembles a linked image with
// binutils and walks the static call graph from the trap entry points.

var (
	funcRE = regexp.MustCompile(`^([0-9a-f]+) <(.+)>:$`)
	callRE = regexp.MustCompile(`\t(jal|j|bal)\s+([0-9a-f]+) <([^>+]+)(\+0x[0-9a-f]+)?>`)
	jalrRE = regexp.MustCompile(`\tjalr\s`)
	luiRE  = regexp.MustCompile(`\tlui\s+\w+,0x([0-9a-f]{1,4})$`)
)

// forbidden reports why calling sym from trap context is not allowed.
func forbidden(sym string) string {
	switch {
	case strings.HasPrefix(sym, "runtime.mallocgc"), strings.HasPrefix(sym, "runtime.newobject"),
		strings.HasPrefix(sym, "runtime.makeslice"), strings.HasPrefix(sym, "runtime.growslice"),
		strings.HasPrefix(sym, "runtime.convT"):
		return "allocates"
	case strings.HasPrefix(sym, "runtime.gcWriteBarrier"), sym == "runtime.wbZero", sym == "runtime.wbMove",
		strings.HasPrefix(sym, "runtime.typedmemmove"), strings.HasPrefix(sym, "runtime.bulkBarrier"):
		return "write barrier"
	case strings.HasPrefix(sym, "runtime.panicBounds"), strings.HasPrefix(sym, "runtime.panicIndex"),
		strings.HasPrefix(sym, "runtime.panicSlice"), strings.HasPrefix(sym, "runtime.goPanic"),
		strings.HasPrefix(sym, "runtime.panicExtend"), sym == "runtime.panicdivide",
		sym == "runtime.panicshift", sym == "runtime.panicmem", sym == "runtime.gopanic",
		sym == "runtime.panicwrap", sym == "runtime.throw":
		return "panics"
	case strings.HasPrefix(sym, "runtime.morestack"), sym == "runtime.newstack":
		return "grows the stack"
	}
	return ""
}

type fn struct {
	calls    []string
	indirect int
	dataRefs []string
}

// isShape reports whether sym is a generic function's shape instantiation,
// which calls its type arguments' methods through its dictionary (jalr).
func isShape(sym string) bool { return strings.Contains(sym, "[go.shape.") }

// dictCallees resolves the indirect calls of shape instantiations: the
// methods they call are the functions their dictionaries hold. For each
// generic function with a shape instantiation, it returns the functions in
// every dictionary of that function the image contains (the linker keeps
// only the dictionaries some caller passes), keyed by the shape
// instantiation's name up to its '['.
func dictCallees(t *testing.T, img string) map[string][]string {
	t.Helper()
	f, err := elf.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	funcAt := map[uint64]string{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			funcAt[s.Value] = s.Name
		}
	}
	out := map[string][]string{}
	for _, s := range syms {
		i := strings.Index(s.Name, "..dict.")
		j := strings.Index(s.Name, "[")
		if i < 0 || j < i || s.Size == 0 || int(s.Section) >= len(f.Sections) {
			continue
		}
		base := s.Name[:i] + "." + s.Name[i+len("..dict."):j] // pkg.Func
		sec := f.Sections[s.Section]
		data := make([]byte, s.Size)
		if _, err := sec.ReadAt(data, int64(s.Value-sec.Addr)); err != nil {
			t.Fatalf("dictionary %s: %v", s.Name, err)
		}
		for k := 0; k+4 <= len(data); k += 4 {
			if name, ok := funcAt[uint64(f.ByteOrder.Uint32(data[k:]))]; ok {
				out[base] = append(out[base], name)
			}
		}
	}
	return out
}

// dataRange returns the image's writable segment [start, end) (BSS included).
func dataRange(t *testing.T, img string) (uint64, uint64) {
	t.Helper()
	f, err := elf.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_W != 0 {
			end := p.Vaddr + p.Memsz
			if syms, err := f.Symbols(); err == nil {
				for _, s := range syms {
					if s.Name == "runtime.end" {
						end = s.Value
					}
				}
			}
			return p.Vaddr, end
		}
	}
	t.Fatal("no writable segment")
	return 0, 0
}

func disassemble(t *testing.T, img string) map[string]*fn {
	t.Helper()
	lo, hi := dataRange(t, img)
	out, err := exec.Command("mips-linux-gnu-objdump", "-d", "--no-show-raw-insn", img).Output()
	if err != nil {
		t.Fatalf("mips-linux-gnu-objdump (binutils-mips-linux-gnu): %v", err)
	}
	funcs := map[string]*fn{}
	var cur *fn
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := funcRE.FindStringSubmatch(l); m != nil {
			cur = &fn{}
			funcs[m[2]] = cur
			continue
		}
		if cur == nil {
			continue
		}
		if m := callRE.FindStringSubmatch(l); m != nil && m[4] == "" {
			cur.calls = append(cur.calls, m[3])
		} else if jalrRE.MatchString(l) {
			cur.indirect++
		} else if m := luiRE.FindStringSubmatch(l); m != nil {
			// A lui whose upper half lies in the data segment is how
			// MIPS code forms a global's address.
			v, _ := strconv.ParseUint(m[1], 16, 32)
			if a := v << 16; a+0xffff >= lo && a < hi {
				cur.dataRefs = append(cur.dataRefs, fmt.Sprintf("%#x", a))
			}
		}
	}
	return funcs
}

// trapHooks are the kernel's platform hooks that run in trap context
// (kernel/platform_mipsx.go); the walk must reach each provider's
// implementation, or it did not check it.
var trapHooks = []string{
	"platformPutc", "platformGetc", "platformIntrPoll", "platformIntrMask", "platformIntrUnmask",
	"platformIntrEOI", "platformIntrPending", "platformIntrSetLevel", "platformReset", "platformPowerOff",
}

// bootHooks run only at boot, before traps are live: no allocation, no
// write barrier, no data segment (it is not mapped yet), but they may
// divide (a runtime call that can panic) and loop.
var bootHooks = []string{
	"platformName", "platformRAM", "platformInit", "platformIntrLines", "platformCountHz", "platformWallClock",
	"platformSeed",
}

// TestTrapDiscipline walks the shipped kernel and the kernel built with the
// boot tests' hazard hooks (-tags gowrt_hazard), whose hooks run in trap
// context too. The shipped kernel must not contain the hooks at all.
func TestTrapDiscipline(t *testing.T) {
	for _, tags := range []string{"", "gowrt_hazard"} {
		name, flags := "shipped", []string(nil)
		if tags != "" {
			name, flags = tags, []string{"-tags", tags}
		}
		t.Run(name, func(t *testing.T) {
			img := buildImage(t, "malta-be", "./examples/hello", flags...)
			checkTrapDiscipline(t, img, tags != "")
		})
	}
}

// walkRule reports why sym may not be called from the walk's context, or
// that it may be called but is not walked (leaf).
type walkRule func(sym string) (why string, leaf bool)

func trapRule(sym string) (string, bool) { return forbidden(sym), false }

// walk follows direct calls (and shape instantiations' dictionary calls)
// from roots and reports every rule broken, with one call path for each.
// It returns the functions reached.
func walk(t *testing.T, funcs map[string]*fn, dicts map[string][]string, roots []string, rule walkRule) map[string]string {
	t.Helper()
	from := map[string]string{}
	queue := []string{}
	for _, r := range roots {
		if funcs[r] == nil {
			t.Fatalf("%s not found in the image", r)
		}
		from[r] = ""
		queue = append(queue, r)
	}
	var bad []string
	path := func(s string) string {
		p := []string{s}
		for from[s] != "" {
			s = from[s]
			p = append([]string{s}, p...)
		}
		return strings.Join(p, " → ")
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		why, leaf := rule(s)
		if why != "" {
			bad = append(bad, why+": "+path(s))
			continue
		}
		if leaf {
			continue
		}
		f := funcs[s]
		if f == nil {
			bad = append(bad, "not in the disassembly: "+path(s))
			continue
		}
		calls := f.calls
		if f.indirect > 0 {
			// A shape instantiation's indirect calls are its type
			// arguments' methods, which its dictionaries hold.
			if d := dicts[s[:strings.Index(s+"[", "[")]]; isShape(s) && len(d) > 0 {
				calls = append(append([]string(nil), calls...), d...)
			} else {
				bad = append(bad, "indirect call (cannot be checked): "+path(s))
			}
		}
		for _, d := range f.dataRefs {
			bad = append(bad, "references the program's data segment "+d+": "+path(s))
		}
		for _, c := range calls {
			if _, seen := from[c]; !seen {
				from[c] = s
				queue = append(queue, c)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	return from
}

// bootRule: boot code may panic (there is nothing to recover, but a bounds
// check in a table walk is not worth contorting the code) and the stack
// guard of its fake g is never poisoned; it must not allocate or hit a
// write barrier.
func bootRule(sym string) (string, bool) {
	switch why := forbidden(sym); why {
	case "panics", "grows the stack":
		return "", true
	default:
		return why, false
	}
}

func checkTrapDiscipline(t *testing.T, img string, hazardHooks bool) {
	funcs := disassemble(t, img)
	dicts := dictCallees(t, img)
	roots := []string{
		"github.com/gowrt/gowrt/kernel.trapEntry",
		"github.com/gowrt/gowrt/kernel.trap",
		"github.com/gowrt/gowrt/kernel.nestedFault",
		"github.com/gowrt/gowrt/kernel.tlbRefill",
	}
	from := walk(t, funcs, dicts, roots, trapRule)
	t.Logf("%d functions reachable from the trap entry", len(from))
	if testing.Verbose() {
		var soc []string
		for s := range from {
			if !strings.HasPrefix(s, "github.com/gowrt/gowrt/kernel.") && !strings.HasPrefix(s, "runtime.") {
				soc = append(soc, s)
			}
		}
		sort.Strings(soc)
		t.Logf("outside the kernel: %s", strings.Join(soc, ", "))
	}
	for _, h := range trapHooks {
		if _, reached := from["github.com/gowrt/gowrt/kernel."+h]; !reached {
			t.Errorf("trap hook %s is not reachable from the trap entry: the walk did not check its provider", h)
		}
	}
	// The boot hooks' providers, under the boot rules. (The kernel's own
	// boot code compares addresses with kseg2, which the data-reference
	// heuristic cannot tell from a global's address, and calls a closure:
	// it is not walked.)
	var bootRoots []string
	for _, h := range bootHooks {
		bootRoots = append(bootRoots, "github.com/gowrt/gowrt/kernel."+h)
	}
	bootFrom := walk(t, funcs, dicts, bootRoots, bootRule)
	t.Logf("%d functions reachable from the boot hooks", len(bootFrom))
	hooks := 0
	for s := range funcs {
		if strings.HasPrefix(s, "github.com/gowrt/gowrt/kernel.") && strings.Contains(s, "hazard") {
			hooks++
			if !hazardHooks {
				t.Errorf("the shipped kernel contains the hazard hook %s", s)
			} else if _, reached := from[s]; !reached {
				t.Errorf("hazard hook %s is not reachable from the trap entry: the walk did not check it", s)
			}
		}
	}
	if hazardHooks && hooks == 0 {
		t.Error("no hazard hook in the gowrt_hazard kernel (all inlined?): nothing shows the walk covered them")
	}
	// The checker must be able to fail: a function known to allocate
	// must be flagged when walked the same way.
	if forbidden("runtime.mallocgc") == "" || forbidden("runtime.panicBounds32") == "" ||
		forbidden("runtime.morestack_noctxt") == "" || forbidden("runtime.gcWriteBarrier2") == "" {
		t.Fatal("forbidden() does not recognise the runtime's allocation/panic/stack symbols")
	}
	if f := funcs["runtime.newobject"]; f == nil || len(f.calls) == 0 {
		t.Fatal("disassembly parsing found no calls in runtime.newobject")
	}
	if f := funcs["runtime.mallocgc"]; f == nil || len(f.dataRefs) == 0 {
		t.Fatal("disassembly parsing found no data-segment references in runtime.mallocgc")
	}
}
