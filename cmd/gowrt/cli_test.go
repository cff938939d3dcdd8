//go:build !mips && !mipsle

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/fwimage"
	"github.com/gowrt/gowrt/sysupgrade"
)

// TestCLIMistakes: every mistake a newcomer makes gets its exit status and
// a message that says what to do, before anything is built or booted.
func TestCLIMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want []string // in stderr
	}{
		{nil, 2, []string{"no command given", "gowrt help"}},
		{[]string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`}},
		{[]string{"run"}, 2, []string{"which package?"}},
		{[]string{"run", "../../examples/hello", "../../examples/router"}, 2, []string{"one package expected"}},
		{[]string{"run", "-bogus", "../../examples/hello"}, 2, []string{"flag provided but not defined: -bogus"}},
		{[]string{"run", "-board", "foo", "../../examples/hello"}, 2, []string{`unknown board "foo"`, "sim, ap135, ar71xx, archer-c7-v2, carambola2, malta-be, malta-le, rspro, tl-wdr3600, tl-wdr4300"}},
		{[]string{"run", "-board", "ar71xx", "../../examples/hello"}, 2, []string{"board ar71xx cannot be booted under QEMU", "gowrt build -board ar71xx -o FILE"}},
		{[]string{"run", "-board", "malta-be", "-m", "0", "../../examples/hello"}, 2, []string{"-m 0", "16 to 2048 MiB"}},
		{[]string{"run", "-board", "malta-be", "-m", "3", "../../examples/hello"}, 2, []string{"-m 3", "16 to 2048 MiB"}},
		{[]string{"run", "-board", "malta-be", "-m", "4096", "../../examples/hello"}, 2, []string{"-m 4096"}},
		{[]string{"run", "-board", "malta-be", "-fwd", "70000", "../../examples/router"}, 2, []string{"-fwd 70000 is not a TCP port"}},
		{[]string{"run", "-m", "32", "../../examples/router"}, 2, []string{"-m applies to the malta boards only"}},
		{[]string{"run", "-fwd", "8080", "../../examples/router"}, 2, []string{"-fwd applies to the malta boards only"}},
		{[]string{"run", "-timeout", "-1s", "../../examples/hello"}, 2, []string{"negative"}},
		{[]string{"build", "-board", "malta-be", "../../examples/hello"}, 2, []string{"-o FILE is required"}},
		{[]string{"build", "-board", "sim", "-o", "x", "../../examples/router"}, 2, []string{"gowrt run"}},
		{[]string{"build", "-format", "zip", "-o", "x", "../../examples/hello"}, 2, []string{`-format "zip": elf or uimage`}},
		{[]string{"run", "-board", "tl-wdr4300", "-m", "64", "../../examples/router"}, 2, []string{"-m applies to the malta boards only", "tl-wdr4300 runs as its sim twin"}},
		{[]string{"build", "-board", "tl-wdr4300", "-format", "uimage", "-o", "x", "../../examples/router"}, 2, []string{"-format applies to malta and ar71xx", "tplink image"}},
		{[]string{"build", "-board", "tl-wdr4300", "-compress", "none", "-o", "x", "../../examples/router"}, 2, []string{"-compress applies to the U-Boot uImage routers (ap135, carambola2)", "always LZMA"}},
		{[]string{"build", "-board", "rspro", "-compress", "lzma", "-o", "x", "../../examples/router"}, 2, []string{"-compress applies to the U-Boot uImage routers", "always uncompressed"}},
		{[]string{"build", "-board", "carambola2", "-compress", "zip", "-o", "x", "../../examples/router"}, 2, []string{`-compress "zip": lzma or none`}},
		{[]string{"build", "-board", "malta-be", "-sign", "k", "-o", "x", "../../examples/hello"}, 2, []string{"-sign applies to the router boards"}},
		{[]string{"build", "-board", "ar71xx", "-compress", "none", "-o", "x", "../../examples/hello"}, 2, []string{"-compress applies to the router boards"}},
		{[]string{"build", "-board", "ap135", "-version", "1 2", "-o", "x", "../../examples/router"}, 2, []string{`-version "1 2"`, "no spaces"}},
		{[]string{"build", "-board", "ap135", "-sign", "/no/such/key", "-o", "x", "../../examples/router"}, 1, []string{"-sign", "/no/such/key"}},
		{[]string{"build", "-board", "tl-wdr4300", "-o", "x", "../../examples/hello"}, 1, []string{"imports no router board package", `import _ "github.com/gowrt/gowrt/board/ar71xx/router"`}},
		{[]string{"tftp"}, 2, []string{"tftp: want -board ROUTER [-listen ADDR] FILE"}},
		{[]string{"tftp", "fw.bin"}, 2, []string{"-board ROUTER is required", "tl-wdr4300"}},
		{[]string{"tftp", "-board", "malta-be", "fw.bin"}, 2, []string{`-board "malta-be" is not a router`}},
		{[]string{"tftp", "-board", "ap135", "-listen", "nonsense", "fw.bin"}, 2, []string{`-listen "nonsense"`}},
		{[]string{"tftp", "-board", "ap135", "-listen", ":99999", "fw.bin"}, 2, []string{"bad port"}},
		{[]string{"tftp", "-board", "ap135", "-bogus", "fw.bin"}, 2, []string{"flag provided but not defined: -bogus"}},
		{[]string{"tftp", "-board", "ap135", "-listen", "127.0.0.1:0", "/no/such/fw.bin"}, 1, []string{"/no/such/fw.bin"}},
		{[]string{"keygen"}, 2, []string{"keygen: want -o FILE"}},
		{[]string{"keygen", "-o", "k", "extra"}, 2, []string{"keygen: want -o FILE"}},
		{[]string{"keygen", "-o", "/no/such/dir/k"}, 1, []string{"/no/such/dir/k"}},
		// Package mistakes: found by go list before any build.
		{[]string{"run", "-board", "malta-be", "../../net"}, 1, []string{"is package net, not a main package"}},
		{[]string{"run", "../../net/bridge"}, 1, []string{"is package bridge, not a main package"}},
		{[]string{"run", "../../examples/hello"}, 1, []string{"bare-metal malta firmware", "-board malta-be"}},
		{[]string{"run", "-board", "malta-le", "."}, 1, []string{"imports no malta board package", `import _ "github.com/gowrt/gowrt/board/malta"`}},
		{[]string{"build", "-board", "malta-le", "-o", "x.elf", "."}, 1, []string{`import _ "github.com/gowrt/gowrt/board/malta"`}},
		{[]string{"run", "-board", "malta-le", "./no/such/package"}, 1, []string{"no/such/package"}},
		{[]string{"build", "-board", "ar71xx", "-o", "x.elf", "../../examples/hello"}, 1, []string{"imports no ar71xx board package", `import _ "github.com/gowrt/gowrt/board/ar71xx"`}},
		{[]string{"run", "../../soc/ar71xx/testdata/fw"}, 1, []string{"bare-metal ar71xx firmware", "QEMU cannot boot it", "gowrt build -board ar71xx -o FILE"}},
	} {
		var stdout, stderr strings.Builder
		code := gowrt(tc.args, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("gowrt %q: exit %d, want %d; stderr:\n%s", tc.args, code, tc.code, stderr.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("gowrt %q: stderr lacks %q:\n%s", tc.args, w, stderr.String())
			}
		}
		if strings.Contains(stderr.String(), "goroutine ") {
			t.Errorf("gowrt %q: a stack trace:\n%s", tc.args, stderr.String())
		}
	}
}

// TestTFTPTooBig: gowrt tftp refuses a file larger than the firmware
// partition (a TP-Link factory image) before it serves anything.
func TestTFTPTooBig(t *testing.T) {
	f := filepath.Join(t.TempDir(), "factory.bin")
	if err := os.WriteFile(f, make([]byte, fwimage.TPLink8MLZMA), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	code := gowrt([]string{"tftp", "-board", "tl-wdr4300", "-listen", "127.0.0.1:0", f}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "more than the TP-Link TL-WDR4300 v1's 8060928-byte firmware partition") ||
		!strings.Contains(stderr.String(), "serve the -sysupgrade image") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}

// TestHelp: gowrt help succeeds and documents every flag and board.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"run", "-h"}, {"build", "-help"}} {
		var stdout, stderr strings.Builder
		if code := gowrt(args, &stdout, &stderr); code != 0 {
			t.Errorf("gowrt %q: exit %d, stderr %s", args, code, stderr.String())
		}
		for _, w := range []string{"-board", "-append", "-timeout", "-m MiB", "-fwd PORT", "port 80", "-o FILE",
			"sim ", "malta-be", "malta-le", "gowrt-lan", "124", "128+N",
			"gowrt tftp -board ROUTER FILE", "-listen ADDR", "blksize", "tsize", "-compress C", "-sign KEY", "-version V",
			"FILE-sysupgrade", "FILE-raw.bin", "fis create", "bootm limit", "self-decompressing", "does not fit",
			"tl-wdr4300", "tl-wdr3600", "archer-c7-v2", "carambola2", "rspro", "ap135", "TP-Link TL-WDR4300 v1, tplink image"} {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("gowrt %q: help lacks %q", args, w)
			}
		}
	}
}

// TestKeygen: gowrt keygen writes a private key only its owner reads and
// the public key beside it, both readable by sysupgrade and matching; a
// second run refuses to overwrite the key.
func TestKeygen(t *testing.T) {
	key := filepath.Join(t.TempDir(), "upgrade.key")
	var stdout, stderr strings.Builder
	if code := gowrt([]string{"keygen", "-o", key}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	privPEM, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %v, want 0600", fi.Mode().Perm())
	}
	pubPEM, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	priv, err := sysupgrade.ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sysupgrade.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	img, err := sysupgrade.Sign([]byte("firmware"), sysupgrade.Metadata{Board: "test", Version: "1"}, priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sysupgrade.Verify(img, "test", pub); err != nil {
		t.Fatalf("the pair does not verify: %v", err)
	}
	stderr.Reset()
	if code := gowrt([]string{"keygen", "-o", key}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "never overwritten") {
		t.Fatalf("second keygen: exit %d: %s", code, stderr.String())
	}
	if again, _ := os.ReadFile(key); string(again) != string(privPEM) {
		t.Fatal("the key was overwritten")
	}
}

// TestBuildUImage: gowrt build -format uimage writes a U-Boot legacy image
// of an AR71xx firmware that Debian's mkimage reads as an LZMA-compressed
// MIPS kernel at the firmware's load address, and says how big it is.
func TestBuildUImage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fw.uimage")
	var stdout, stderr strings.Builder
	if code := gowrt([]string{"build", "-board", "ar71xx", "-format", "uimage", "-o", out, "../../soc/ar71xx/testdata/fw"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "gowrt: uImage "+out+": ") || !strings.Contains(stderr.String(), "LZMA") {
		t.Errorf("no size report:\n%s", stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := fwimage.ParseUImage(b)
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "gowrt fw" || u.Comp != "lzma" || u.Load != 0x80100000 {
		t.Errorf("header %+v", u)
	}
	list, err := exec.Command("mkimage", "-l", out).CombinedOutput()
	if err != nil {
		t.Fatalf("mkimage -l (Debian's u-boot-tools): %v\n%s", err, list)
	}
	for _, want := range []string{"Image Name:   gowrt fw", "MIPS Linux Kernel Image (lzma compressed)", "Load Address: 80100000",
		fmt.Sprintf("Entry Point:  %08x", u.Entry)} {
		if !strings.Contains(string(list), want) {
			t.Errorf("mkimage -l lacks %q:\n%s", want, list)
		}
	}
}
