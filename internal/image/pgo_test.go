package image

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"strings"
	"testing"
)

// TestPGOFlag: builds get the embedded firmware profile as a file, unless
// the caller chose a profile of their own.
func TestPGOFlag(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if len(profile) == 0 {
		t.Fatal("no firmware profile embedded")
	}
	for _, own := range [][]string{{"-pgo=off"}, {"-tags", "x", "-pgo", "my.pgo"}, {"--pgo=auto"}} {
		if f, err := pgoFlag(own); err != nil || f != nil {
			t.Errorf("pgoFlag(%q) = %q, %v; want nothing", own, f, err)
		}
	}
	var path string
	for range 2 { // the second call finds the file the first wrote
		f, err := pgoFlag([]string{"-tags", "x"})
		if err != nil || len(f) != 1 || !strings.HasPrefix(f[0], "-pgo=") {
			t.Fatalf("pgoFlag = %q, %v", f, err)
		}
		if path != "" && f[0][len("-pgo="):] != path {
			t.Errorf("profile moved from %s to %s", path, f[0])
		}
		path = f[0][len("-pgo="):]
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, profile) {
			t.Fatalf("%s: %d bytes, %v; want the embedded %d", path, len(got), err, len(profile))
		}
	}
}

// buildSetting returns the value of the build setting key recorded in the
// image at path ("" if absent).
func buildSetting(t *testing.T, path, key string) string {
	t.Helper()
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
