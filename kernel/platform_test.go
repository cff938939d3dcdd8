package kernel

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const hookPrefix = "github.com/gowrt/gowrt/kernel."

// signature prints a function type without parameter names.
func signature(t *testing.T, fset *token.FileSet, ft *ast.FuncType) string {
	t.Helper()
	strip := func(fl *ast.FieldList) *ast.FieldList {
		if fl == nil {
			return nil
		}
		out := &ast.FieldList{}
		for _, f := range fl.List {
			n := len(f.Names)
			if n == 0 {
				n = 1
			}
			for i := 0; i < n; i++ {
				out.List = append(out.List, &ast.Field{Type: f.Type})
			}
		}
		return out
	}
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, &ast.FuncType{Params: strip(ft.Params), Results: strip(ft.Results)}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPlatformHookSignatures: the linker binds the platform hooks by name
// only, so a provider whose signature differs from the kernel's
// declaration would be called with the wrong arguments. Every push
// linkname into the kernel in this module must name a declared hook with
// the same signature, and every provider package must provide them all.
func TestPlatformHookSignatures(t *testing.T) {
	fset := token.NewFileSet()
	decl, err := parser.ParseFile(fset, "platform_mipsx.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	hooks := map[string]string{}
	for _, d := range decl.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body == nil && strings.HasPrefix(fd.Name.Name, "platform") {
			hooks[fd.Name.Name] = signature(t, fset, fd.Type)
		}
	}
	if len(hooks) < 10 {
		t.Fatalf("found only %d hook declarations in platform_mipsx.go", len(hooks))
	}
	provided := map[string]map[string]bool{} // package dir -> hooks
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(src, []byte(hookPrefix)) {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Doc == nil {
				continue
			}
			for _, c := range fd.Doc.List {
				fields := strings.Fields(c.Text)
				if len(fields) != 3 || fields[0] != "//go:linkname" || !strings.HasPrefix(fields[2], hookPrefix) {
					continue
				}
				hook := strings.TrimPrefix(fields[2], hookPrefix)
				want, ok := hooks[hook]
				if !ok {
					t.Errorf("%s: %s is linked to %s, which the kernel does not declare", path, fd.Name.Name, fields[2])
					continue
				}
				if fields[1] != fd.Name.Name {
					t.Errorf("%s: the linkname for %s names %s", path, fd.Name.Name, fields[1])
				}
				if got := signature(t, fset, fd.Type); got != want {
					t.Errorf("%s: %s is %s, the kernel declares %s %s", path, fd.Name.Name, got, hook, want)
				}
				dir := filepath.Dir(path)
				if provided[dir] == nil {
					provided[dir] = map[string]bool{}
				}
				provided[dir][hook] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for dir, got := range provided {
		dirs = append(dirs, dir)
		for h := range hooks {
			if !got[h] {
				t.Errorf("%s provides some platform hooks but not %s", dir, h)
			}
		}
	}
	sort.Strings(dirs)
	if len(dirs) < 2 {
		t.Errorf("providers: %v; want soc/malta and soc/ar71xx/baremetal at least", dirs)
	}
	t.Logf("%d hooks, providers %v", len(hooks), dirs)
}
