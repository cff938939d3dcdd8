//go:build !mips && !mipsle

package layering

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gowrt/gowrt"

// targets are the firmware's build configurations the rules hold for.
var targets = []string{"mips", "mipsle"}

// pkgInfo is one package of a dependency list.
type pkgInfo struct {
	std     bool
	imports []string
}

// deps returns the packages roots link, themselves included, for
// GOOS=linux GOARCH=arch GOMIPS=softfloat, by import path.
func deps(t *testing.T, arch string, roots ...string) map[string]pkgInfo {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}"}, roots...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "GOMIPS=softfloat", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go %s (GOARCH=%s): %v\n%s", strings.Join(args, " "), arch, err, msg)
	}
	m := map[string]pkgInfo{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("go list line %q", l)
		}
		m[f[0]] = pkgInfo{std: f[1] == "true", imports: strings.Fields(f[2])}
	}
	return m
}

// chain returns an import path from one of roots to p, for the message.
func chain(m map[string]pkgInfo, roots []string, p string) string {
	prev := map[string]string{}
	queue := append([]string(nil), roots...)
	for _, r := range roots {
		prev[r] = ""
	}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		if q == p {
			var c []string
			for x := p; x != ""; x = prev[x] {
				c = append([]string{x}, c...)
			}
			return strings.Join(c, " -> ")
		}
		for _, i := range m[q].imports {
			if _, seen := prev[i]; !seen {
				prev[i] = q
				queue = append(queue, i)
			}
		}
	}
	return p
}

// forbid fails the test if roots link a package bad reports. It names
// the first bad package on each import path, not what those import.
func forbid(t *testing.T, roots []string, why string, bad func(path string, p pkgInfo) bool) {
	t.Helper()
	for _, arch := range targets {
		m := deps(t, arch, roots...)
		isBad := func(path string) bool { return bad(path, m[path]) }
		var found []string
		for path, p := range m {
			if !isBad(path) {
				for _, i := range p.imports {
					if isBad(i) && !slices.Contains(found, i) {
						found = append(found, i)
					}
				}
			}
		}
		for _, r := range roots {
			if isBad(r) && !slices.Contains(found, r) {
				found = append(found, r)
			}
		}
		slices.Sort(found)
		for _, path := range found {
			t.Errorf("GOARCH=%s: %s: %s", arch, why, chain(m, roots, path))
		}
	}
}

// TestDriversLinkNoKernel: the MAC drivers, the USB stack and the bridge
// link neither the kernel, nor malta's chipset code, nor gVisor's stack.
func TestDriversLinkNoKernel(t *testing.T) {
	roots := []string{module + "/arge", module + "/pcnet", module + "/net/bridge",
		module + "/usbnet", module + "/usbnet/usb", module + "/usbnet/uhci", module + "/usbnet/cdcecm",
		module + "/usbnet/axge", module + "/usbnet/ehci", module + "/ath/ar9300"}
	banned := []string{module + "/kernel", module + "/soc/malta", "gvisor.dev/gvisor/pkg/tcpip/stack"}
	forbid(t, roots, "a driver or the bridge links a package it must not", func(path string, _ pkgInfo) bool {
		for _, b := range banned {
			if path == b || strings.HasPrefix(path, b+"/") {
				return true
			}
		}
		return false
	})
}

// TestNICContractIsLeaf: package net, the NIC contract, imports only the
// standard library: nothing from gowrt, gVisor or elsewhere.
func TestNICContractIsLeaf(t *testing.T) {
	root := module + "/net"
	forbid(t, []string{root}, "the NIC contract links a package outside the standard library", func(path string, p pkgInfo) bool {
		return path != root && !p.std
	})
}

// TestUSBCoreIsLeaf: the USB core (host-controller contract, enumeration,
// descriptors) imports only the standard library, so a controller driver
// or a USB device driver can be embedded without the rest of gowrt.
func TestUSBCoreIsLeaf(t *testing.T) {
	root := module + "/usbnet/usb"
	forbid(t, []string{root}, "the USB core links a package outside the standard library", func(path string, p pkgInfo) bool {
		return path != root && !p.std
	})
}

// TestWrongCodeOnlyInTests: internal/wrongcode, the wrappers that make a
// driver commit the mistakes its hazard tests catch, is imported by test
// files only; no package of the module (so no firmware) links it.
func TestWrongCodeOnlyInTests(t *testing.T) {
	wc := module + "/internal/wrongcode"
	for _, arch := range targets {
		m := deps(t, arch, module+"/...")
		for path, p := range m {
			if path != wc && slices.Contains(p.imports, wc) {
				t.Errorf("GOARCH=%s: %s imports %s, which only tests may", arch, path, wc)
			}
		}
	}
}

// TestBoardsWireDrivers: what a board wires stays out of the MAC driver:
// arge does not poll its PHY (the board follows it with phy.Follow and
// tells the NIC the link), so it links no PHY driver, and it gets its
// SoC's services and parameters from the board (board/ar71xx/argeport),
// so it links no SoC package.
func TestBoardsWireDrivers(t *testing.T) {
	banned := []string{module + "/mdio/phy", module + "/soc/ar71xx"}
	forbid(t, []string{module + "/arge"}, "the MAC driver links what the board wires", func(path string, _ pkgInfo) bool {
		for _, b := range banned {
			if path == b || strings.HasPrefix(path, b+"/") {
				return true
			}
		}
		return false
	})
}

// TestModelsDontTrustDrivers: a hardware model keeps its own register
// facts instead of importing its driver's, so a wrong constant in the
// driver is caught by the model, not shared with it. (physim and
// ar71xxsim still use their drivers' packages.)
func TestModelsDontTrustDrivers(t *testing.T) {
	for model, driver := range map[string]string{
		"arge/argesim":         "arge",
		"pcnet/pcnetsim":       "pcnet",
		"arswitch/arswitchsim": "arswitch",
		"flash/cfi/cfisim":     "flash/cfi",
		"usbnet/uhci/uhcisim":  "usbnet/uhci",
		"usbnet/axge/axgesim":  "usbnet/axge",
		"usbnet/cdcecm/ecmsim": "usbnet/cdcecm",
		"ath/ar9300/ar9300sim": "ath/ar9300",
		"usbnet/ehci/ehcisim":  "usbnet/ehci",
	} {
		forbid(t, []string{module + "/" + model}, model+" links its driver", func(path string, _ pkgInfo) bool {
			return path == module+"/"+driver
		})
	}
}

// TestRouterCoreStandalone: the packet and rule engines of the router
// import only the standard library (config/uci, for the firewall's
// configuration, aside), so they can be embedded and fuzzed anywhere;
// the forwarding layer links gVisor's buffers but not its stack (the
// stack is reached through forward.Resolver, which net/router provides).
func TestRouterCoreStandalone(t *testing.T) {
	for _, root := range []string{"/net/nat", "/config/uci", "/sys/event"} {
		root = module + root
		forbid(t, []string{root}, "a router core package links a package outside the standard library", func(path string, p pkgInfo) bool {
			return path != root && !p.std
		})
	}
	fw := module + "/net/firewall"
	forbid(t, []string{fw}, "the firewall links a package other than config/uci and the standard library", func(path string, p pkgInfo) bool {
		return path != fw && path != module+"/config/uci" && !p.std
	})
	forbid(t, []string{module + "/net/forward"}, "the forwarding layer links gVisor's stack", func(path string, _ pkgInfo) bool {
		return path == "gvisor.dev/gvisor/pkg/tcpip/stack" || path == module+"/kernel"
	})
}
