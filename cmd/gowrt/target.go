package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"

	"github.com/gowrt/gowrt/internal/image"
)

const (
	modulePath = "github.com/gowrt/gowrt"
	simBoard   = modulePath + "/board/sim"
)

// pkgInfo is what go list says of a package built for one target.
type pkgInfo struct {
	ImportPath string
	Name       string
	Deps       []string
	Error      *struct{ Err string }
}

// imports reports whether the package links path or a package below it.
func (p pkgInfo) imports(path string) bool {
	for _, d := range p.Deps {
		if d == path || strings.HasPrefix(d, path+"/") {
			return true
		}
	}
	return false
}

// inspect runs go list for pkg with the build tags and env (GOOS, GOARCH
// … of the target) added to gowrt's own environment.
func inspect(pkg string, tags []string, env ...string) (pkgInfo, error) {
	args := []string{"list", "-e", "-json=ImportPath,Name,Deps,Error"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return pkgInfo{}, fmt.Errorf("go list %s: %v\n%s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	var p pkgInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&p); err != nil {
		return pkgInfo{}, fmt.Errorf("go list %s: %v", pkg, err)
	}
	if dec.More() {
		return pkgInfo{}, fmt.Errorf("%s names more than one package: gowrt runs one firmware main", pkg)
	}
	if p.Error != nil {
		return p, fmt.Errorf("%s: %s", pkg, strings.TrimSpace(p.Error.Err))
	}
	if p.Name != "main" {
		return p, fmt.Errorf("%s is package %s, not a main package: gowrt runs a firmware main such as ./examples/router or ./examples/hello", pkg, p.Name)
	}
	return p, nil
}

// checkBoard says what is missing when pkg cannot become an image for b.
func checkBoard(p pkgInfo, pkg string, b image.Board) error {
	if !p.imports(b.Package) {
		kind := path.Base(b.Package)
		return fmt.Errorf("%s imports no %s board package, so its image would have no kernel to boot: add\n\timport _ %q\nto it to make it %s firmware", pkg, kind, b.Package, kind)
	}
	return nil
}

// checkSim says what is missing when pkg cannot run on the sim board.
func checkSim(p pkgInfo, pkg string) error {
	if p.imports(simBoard) {
		return nil
	}
	for _, name := range image.Names() {
		b := image.Boards[name]
		if !p.imports(b.Package) {
			continue
		}
		var use []string
		for _, n := range image.Names() {
			if image.Boards[n].Package == b.Package {
				use = append(use, "-board "+n)
			}
		}
		if !b.Bootable() {
			return fmt.Errorf("%s is bare-metal %s firmware (it imports %s, not board/sim), and QEMU cannot boot it: build its image with gowrt build %s -o FILE %s", pkg, path.Base(b.Package), strings.TrimPrefix(b.Package, modulePath+"/"), use[0], pkg)
		}
		return fmt.Errorf("%s is bare-metal %s firmware (it imports %s, not board/sim): run it with %s", pkg, path.Base(b.Package), strings.TrimPrefix(b.Package, modulePath+"/"), strings.Join(use, " or "))
	}
	return fmt.Errorf("%s imports no board package: add\n\timport _ %q\nto run it on the sim board (or board/malta to boot it on QEMU with -board malta-be)", pkg, simBoard)
}
