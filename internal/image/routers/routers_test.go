package routers

import (
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/internal/image"
)

// TestRouterBoards: every boardfile router is a board with the generic
// ar71xx board's kernel layout, the router package, the router tag and its
// name linked in; the malta boards are as they were.
func TestRouterBoards(t *testing.T) {
	generic := image.Boards["ar71xx"]
	for _, r := range boardfile.All {
		b, err := image.LookupBoard(r.Name)
		if err != nil {
			t.Fatal(err)
		}
		if b.GOARCH != "mips" || b.Package != image.RouterPackage || Of(b) != r || b.Bootable() ||
			b.TextAddr != generic.TextAddr || b.DataAddr != generic.DataAddr || b.Entry != generic.Entry || b.Fixup == nil {
			t.Errorf("%s: %+v", r.Name, b)
		}
		if !slices.Equal(b.Tags, []string{image.RouterTag}) {
			t.Errorf("%s: tags %v", r.Name, b.Tags)
		}
		want := "-T 0x80101000 -D 0xc0000000 -R 0x1000 -E github.com/gowrt/gowrt/kernel.Entry -X github.com/gowrt/gowrt/board/ar71xx/router.boardName=" + r.Name
		if got := b.LDFlags(b.LDExtra); got != want {
			t.Errorf("%s: ldflags %q", r.Name, got)
		}
	}
	for _, n := range []string{"malta-be", "malta-le", "ar71xx"} {
		b := image.Boards[n]
		if b.Tags != nil || b.LDExtra != "" || Of(b) != nil {
			t.Errorf("%s changed: %+v", n, b)
		}
		if got := b.LDFlags(b.LDExtra); got != "-T 0x80101000 -D 0xc0000000 -R 0x1000 -E github.com/gowrt/gowrt/kernel.Entry" {
			t.Errorf("%s: ldflags %q", n, got)
		}
	}
	if len(image.Names()) != 3+len(boardfile.All) {
		t.Errorf("boards %v", image.Names())
	}
}

// deps lists the packages pkg links for board b.
func deps(t *testing.T, b image.Board, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", append(append([]string{"list", "-deps"}, b.GoFlags()...), pkg)...)
	cmd.Dir = "../../.."
	cmd.Env = append(os.Environ(), b.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestRouterBuild: image.Build links examples/router for a router with the
// router board (not malta's pcnet) and records the tag in the image's
// build information; for malta the same package still links
// board/malta/eth and not the router board.
func TestRouterBuild(t *testing.T) {
	out := filepath.Join(t.TempDir(), "wdr.elf")
	if err := image.Build(context.Background(), image.Boards["tl-wdr4300"], "../../..", "./examples/router", out); err != nil {
		t.Fatal(err)
	}
	bi, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	// -trimpath keeps -ldflags out of the build information: the linked
	// name is checked in the ELF's data by cmd/gowrt's TestBuildRouters.
	if settings["-tags"] != image.RouterTag || settings["GOARCH"] != "mips" {
		t.Errorf("build settings %v", settings)
	}
	wdr := deps(t, image.Boards["tl-wdr4300"], "./examples/router")
	malta := deps(t, image.Boards["malta-be"], "./examples/router")
	if !slices.Contains(wdr, image.RouterPackage) || slices.Contains(wdr, "github.com/gowrt/gowrt/board/malta/eth") {
		t.Error("the router build does not link board/ar71xx/router alone")
	}
	if slices.Contains(malta, image.RouterPackage) || !slices.Contains(malta, "github.com/gowrt/gowrt/board/malta/eth") {
		t.Error("the malta build changed")
	}
}
