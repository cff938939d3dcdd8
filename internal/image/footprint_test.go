package image

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestSymbolPackage(t *testing.T) {
	for name, want := range map[string]string{
		"net/http.(*Server).Serve":                     "net/http",
		"gvisor.dev/gvisor/pkg/tcpip/stack.New":        "gvisor.dev/gvisor/pkg/tcpip/stack",
		"github.com/miekg/dns.(*Msg).Pack":             "github.com/miekg/dns",
		"runtime.mallocgc":                             "runtime",
		"type:*net/http.Server":                        "<type>",
		"go:func.*":                                    "<go>",
		"crypto/internal/fips140/drbg.memory":          "crypto/internal/fips140/drbg",
		"github.com/gowrt/gowrt/kernel.Entry":          "github.com/gowrt/gowrt/kernel",
		"vendor/golang.org/x/net/idna.idnaValues":      "vendor/golang.org/x/net/idna",
		"gopkg.in/yaml%2ev3.(*decoder).unmarshal":      "gopkg.in/yaml.v3",
		"github.com/robfig/cron/v3.(*Cron).Start":      "github.com/robfig/cron/v3",
		"runtime.text":                                 "runtime",
		"sync/atomic.(*Int64).Add":                     "sync/atomic",
		"github.com/gowrt/gowrt/net/router.init.func1": "github.com/gowrt/gowrt/net/router",
	} {
		if got := SymbolPackage(name); got != want {
			t.Errorf("SymbolPackage(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestExclusive(t *testing.T) {
	g := map[string][]string{
		"main": {"a", "b"},
		"a":    {"x", "shared"},
		"b":    {"shared", "y"},
		"x":    {"x2"},
		"y":    {"x"},
	}
	for _, c := range []struct {
		roots []string
		want  string
	}{
		{[]string{"a"}, "a"},   // x stays: b → y → x
		{[]string{"b"}, "b y"}, // shared stays through a
		{[]string{"a", "b"}, "a b shared x x2 y"},
		{[]string{"y"}, "y"},
		{[]string{"nowhere"}, ""},
	} {
		if got := strings.Join(Exclusive(g, "main", c.roots...), " "); got != c.want {
			t.Errorf("Exclusive(%v) = %q, want %q", c.roots, got, c.want)
		}
	}
}

// routerFeatures are the router's features by the packages that bring them
// in: cutting a feature's roots drops Exclusive(roots) from the image. A
// root ending in "/" stands for every package under it.
var routerFeatures = []struct {
	name  string
	roots []string
}{
	{"gVisor (every gvisor.dev package)", []string{"gvisor.dev/"}},
	{"net/http (web UI)", []string{"net/http"}},
	{"crypto/tls (net/http)", []string{"crypto/tls"}},
	{"crypto/x509", []string{"crypto/x509"}},
	{"SSH (mgmt/sshd, x/crypto/ssh)", []string{"github.com/gowrt/gowrt/mgmt/sshd", "golang.org/x/crypto/ssh"}},
	{"web UI (mgmt/web)", []string{"github.com/gowrt/gowrt/mgmt/web"}},
	{"console shell (mgmt/shell)", []string{"github.com/gowrt/gowrt/mgmt/shell"}},
	{"DNS (dnsfwd)", []string{"github.com/gowrt/gowrt/net/dns/dnsfwd"}},
	{"DHCP (dhcpc, dhcpd, insomniacslk/dhcp)", []string{"github.com/gowrt/gowrt/net/dhcp/dhcpc", "github.com/gowrt/gowrt/net/dhcp/dhcpd", "github.com/insomniacslk/dhcp/dhcpv4"}},
	{"NAT, firewall, flow path", []string{"github.com/gowrt/gowrt/net/nat", "github.com/gowrt/gowrt/net/firewall", "github.com/gowrt/gowrt/net/forward"}},
	{"sysupgrade (mgmt/upgrade)", []string{"github.com/gowrt/gowrt/sysupgrade", "github.com/gowrt/gowrt/mgmt/upgrade"}},
	{"cron (sys/cron, robfig/cron)", []string{"github.com/gowrt/gowrt/sys/cron", "github.com/robfig/cron/v3"}},
	{"SNTP", []string{"github.com/gowrt/gowrt/net/sntp"}},
	{"log/slog", []string{"log/slog"}},
	{"encoding/json", []string{"encoding/json"}},
	{"regexp (gVisor's log)", []string{"regexp"}},
	{"math/big", []string{"math/big"}},
}

// TestRouterFootprint builds examples/router (the whole firmware: router,
// web UI, SSH, console shell, upgrades), the router alone as the 16 MiB
// board runs it (board/malta/boottest/progs/routertest, the image
// TestRouterSmallRAM boots) and examples/hello for malta-be, checks that
// each footprint's parts add up to its load segments, and logs their sizes
// against the 4 MiB-flash goal and what each of the firmware's features'
// imports cost (bytes of symbols, plus the function tables' share in
// proportion).
func TestRouterFootprint(t *testing.T) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(strings.TrimSpace(string(root)))
	b, _ := LookupBoard("malta-be")
	fps := map[string]Footprint{}
	imgs := map[string]string{}
	for _, prog := range []string{"hello", "router", "routertest"} {
		pkg := "./examples/" + prog
		if prog == "routertest" {
			pkg = "./board/malta/boottest/progs/routertest"
		}
		img := filepath.Join(t.TempDir(), prog+".elf")
		if err := Build(context.Background(), b, dir, pkg, img); err != nil {
			t.Fatal(err)
		}
		fp, err := ReadFootprint(img)
		if err != nil {
			t.Fatal(err)
		}
		if pgo := buildSetting(t, img, "-pgo"); !strings.HasSuffix(pgo, ".pgo") {
			t.Errorf("%s: built with -pgo=%q, not the firmware profile", prog, pgo)
		}
		// The parts are the sections; the load segments hold them plus
		// ELF headers and alignment padding, under a page per segment.
		parts := fp.Text + fp.ROData + fp.PCLNTab + fp.Data
		if fp.Load < parts || fp.Load > parts+3*pageSize+pageSize {
			t.Errorf("%s: load segments %d bytes, sections %d", prog, fp.Load, parts)
		}
		if fp.RAM < fp.Load+KernelArea {
			t.Errorf("%s: RAM at boot %d < load %d + kernel area", prog, fp.RAM, fp.Load)
		}
		xz, err := fp.XZ()
		if err != nil {
			t.Fatal(err)
		}
		if xz <= 0 || uint64(xz) >= fp.Load {
			t.Errorf("%s: xz %d bytes of %d", prog, xz, fp.Load)
		}
		t.Logf("%-10s ELF %5.2f MiB; load %5.2f MiB (text %.2f, rodata %.2f, pclntab %.2f, data %.2f; BSS %.2f not loaded); RAM at boot %5.2f MiB; xz %5.2f MiB (flash goal 4 MiB)",
			prog, mib(uint64(fp.File)), mib(fp.Load), mib(fp.Text), mib(fp.ROData), mib(fp.PCLNTab), mib(fp.Data), mib(fp.BSS), mib(fp.RAM), mib(uint64(xz)))
		fps[prog], imgs[prog] = fp, img
	}
	if fps["router"].Load <= fps["routertest"].Load || fps["routertest"].Load <= fps["hello"].Load {
		t.Errorf("load segments: firmware %d, router alone %d, hello %d: not in that order",
			fps["router"].Load, fps["routertest"].Load, fps["hello"].Load)
	}

	// Per feature: the packages only it brings in, and their bytes.
	sizes, err := PackageSizes(imgs["router"])
	if err != nil {
		t.Fatal(err)
	}
	var symTotal uint64
	for _, n := range sizes {
		symTotal += n
	}
	if fp := fps["router"]; symTotal < fp.Text || symTotal > fp.Load {
		t.Errorf("symbols cover %d bytes: not between text %d and load %d", symTotal, fp.Text, fp.Load)
	}
	graph := importGraph(t, dir, b, "./examples/router")
	main := "github.com/gowrt/gowrt/examples/router"
	pcln := float64(fps["router"].PCLNTab) / float64(symTotal)
	var lines []string
	for _, f := range routerFeatures {
		var roots []string
		for _, r := range f.roots {
			if !strings.HasSuffix(r, "/") {
				roots = append(roots, r)
				continue
			}
			for p := range graph {
				if strings.HasPrefix(p, r) {
					roots = append(roots, p)
				}
			}
		}
		pkgs := Exclusive(graph, main, roots...)
		if len(pkgs) == 0 {
			t.Errorf("feature %q: the router imports none of %v", f.name, f.roots)
			continue
		}
		var n uint64
		for _, p := range pkgs {
			n += sizes[p]
		}
		withTables := float64(n) * (1 + pcln)
		lines = append(lines, fmt.Sprintf("%-40s %6d KiB symbols, ~%6.0f KiB with function tables, %3d packages", f.name, n>>10, withTables/1024, len(pkgs)))
	}
	t.Logf("router features (what dropping each one's imports would save; features overlap):\n%s", strings.Join(lines, "\n"))
	type pkgSize struct {
		name string
		n    uint64
	}
	var top []pkgSize
	for p, n := range sizes {
		top = append(top, pkgSize{p, n})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].n > top[j].n })
	lines = lines[:0]
	for _, p := range top[:min(25, len(top))] {
		lines = append(lines, fmt.Sprintf("%8d KiB %s", p.n>>10, p.name))
	}
	t.Logf("router's largest packages (symbols):\n%s", strings.Join(lines, "\n"))
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// importGraph returns pkg's dependency graph for board b (each package's
// imports, vendor paths as the linker names them).
func importGraph(t *testing.T, dir string, b Board, pkg string) map[string][]string {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", pkg)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), b.Env()...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	g := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		g[f[0]] = f[1:]
	}
	return g
}
