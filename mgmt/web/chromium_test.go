package web

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gowrt/gowrt/internal/headless"
)

// artifactDir is where the test keeps its screenshots: $GOWRT_ARTIFACTS
// (CI collects it) or the test's temporary directory.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("GOWRT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestChromium drives the UI in headless Chromium: the overview and its
// live graphs (no console errors, no CSP violations), the login, and a
// DHCP range change that the configuration commits.
func TestChromium(t *testing.T) {
	b, err := headless.Start(t.TempDir(), 90*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := b.Ctx
	h := newHarness(t)
	srv := httptest.NewServer(h.ui)
	defer srv.Close()
	dir := artifactDir(t)
	consoleSince := b.Console
	must := func(step string, err error) {
		t.Helper()
		if err := b.Step(step, err); err != nil {
			t.Fatal(err)
		}
	}

	// The listener sees what it must: a probe error is reported.
	must("probe page", chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/login")))
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](`console.error("gowrt-probe")`))
	must("probe", err)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(strings.Join(consoleSince(0), "\n"), "gowrt-probe") {
		if time.Now().After(deadline) {
			t.Fatalf("the console listener did not see a console.error; console: %q", consoleSince(0))
		}
		time.Sleep(50 * time.Millisecond)
	}
	start := len(consoleSince(0))

	// The overview without a login; the script fetches /status.json and
	// draws at least two samples of the WAN port's rate.
	must("overview", chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	hostname, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main section table td")))
	must("hostname", err)
	if hostname != "gowrt" {
		t.Errorf("first cell %q, want the host name", hostname)
	}
	points, err := chromedp.Run(ctx, chromedp.Poll[string](
		`(function(){var p=document.getElementById('grx0').getAttribute('points');return p.split(' ').length>=3&&document.getElementById('live').textContent==='live'?p:null})()`,
		chromedp.WithPollingTimeout(20*time.Second)))
	must("live graph", err)
	t.Logf("WAN receive graph: %s", points)
	rate, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("rate0")))
	must("rate", err)
	if !strings.Contains(rate, "/s in") {
		t.Errorf("rate text %q", rate)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must("overview screenshot", err)
	overviewPNG := filepath.Join(dir, "web-overview.png")
	must("write", os.WriteFile(overviewPNG, shot, 0o644))

	// The DHCP page needs a login, which leads back to it.
	must("dhcp page", chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/settings/dhcp")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	must("location", err)
	if !strings.Contains(loc, "/login?next=") {
		t.Fatalf("settings without a login at %s", loc)
	}
	must("log in", chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("password"), testPassword),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.ID("start")),
	))
	must("change start", chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("start"), "120"),
		chromedp.Click(chromedp.CSS("main form button")),
		chromedp.WaitVisible(chromedp.CSS("p.ok")),
	))
	got, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("start")))
	must("read start", err)
	if got != "120" {
		t.Errorf("DHCP start on the page after saving: %q, want 120", got)
	}
	if v := h.store.committedValue("dhcp.lan.start"); v != "120" {
		t.Errorf("committed dhcp.lan.start = %q, want 120", v)
	}
	shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must("dhcp screenshot", err)
	dhcpPNG := filepath.Join(dir, "web-dhcp.png")
	must("write", os.WriteFile(dhcpPNG, shot, 0o644))
	t.Logf("screenshots: %s %s", overviewPNG, dhcpPNG)

	// Back to the overview for a few more refreshes, logged in now.
	must("overview again", chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.Sleep(5*time.Second)))
	if msgs := consoleSince(start); len(msgs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(msgs, "\n"))
	}
}
