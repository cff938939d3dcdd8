//go:build !mips && !mipsle

package web

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestShippedDependencies: the package links neither a template engine
// (html/template costs about 3.7 MB of firmware image) nor the test-only
// browser driver, for the firmware's targets.
func TestShippedDependencies(t *testing.T) {
	for _, arch := range []string{"mips", "mipsle"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "GOMIPS=softfloat", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", arch, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list (%s) listed only %q", arch, deps)
		}
		for _, d := range deps {
			if d == "html/template" || d == "text/template" || strings.HasPrefix(d, "github.com/chromedp/") {
				t.Errorf("%s: mgmt/web links %s", arch, d)
			}
			if strings.HasPrefix(d, "github.com/") && !strings.HasPrefix(d, "github.com/gowrt/gowrt/") {
				t.Errorf("%s: mgmt/web links a third-party package %s", arch, d)
			}
		}
	}
}
