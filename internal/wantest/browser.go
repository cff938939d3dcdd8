package wantest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gowrt/gowrt/internal/headless"
	"github.com/gowrt/gowrt/internal/netns"
)

// BrowserTask is what a LAN user does in the router's web UI on first
// boot, in headless Chromium (Debian's chromium package) inside a LAN
// namespace: open the overview, log in with the console's setup token and
// choose the password, add an SSH key and change the DHCP pool's start.
type BrowserTask struct {
	URL       string // http://192.168.1.1
	Token     string // the setup token from the console
	Password  string // the password to choose
	SSHKey    string // an authorized_keys line to add
	DHCPStart int    // the new dhcp.lan.start
	Dir       string // where the screenshots go
}

// Browse runs task in Chromium inside ns and fails the test if a step
// fails or the page logs an error.
func Browse(t testing.TB, ns *netns.NS, task BrowserTask) {
	t.Helper()
	b, _ := json.Marshal(task)
	out, err := ns.Exec(3*time.Minute, "env", roleEnv+"=browser:"+base64.StdEncoding.EncodeToString(b), Self(t))
	if err != nil || !strings.Contains(out, "browser: ok") {
		t.Fatalf("web UI in Chromium: %v\n%s", err, out)
	}
	t.Logf("web UI in Chromium:\n%s", out)
}

// runBrowser is the browser role.
func runBrowser(arg string) error {
	raw, err := base64.StdEncoding.DecodeString(arg)
	if err != nil {
		return err
	}
	var task BrowserTask
	if err := json.Unmarshal(raw, &task); err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "gowrt-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	b, err := headless.Start(profile, 150*time.Second, prefixWriter{"chromium: "})
	if err != nil {
		return err
	}
	defer b.Close()
	ctx := b.Ctx
	step := func(name string, err error) error {
		if err := b.Step(name, err); err != nil {
			return err
		}
		fmt.Println("browser:", name)
		return nil
	}
	shot := func(name string) error {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			return step("screenshot "+name, err)
		}
		p := filepath.Join(task.Dir, name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			return err
		}
		fmt.Println("browser: screenshot", p)
		return nil
	}

	// The overview, open without a login, with its live graph drawn
	// from /status.json.
	if err := step("overview", chromedp.Do(ctx, chromedp.Navigate(task.URL+"/"))); err != nil {
		return err
	}
	_, err = chromedp.Run(ctx, chromedp.Poll[string](
		`(function(){var p=document.getElementById('grx0');return p&&p.getAttribute('points').split(' ').length>=3?'ok':null})()`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err := step("live graph", err); err != nil {
		return err
	}
	if err := shot("firmware-overview.png"); err != nil {
		return err
	}
	// First boot: the setup token sets the password and logs in.
	if err := step("first-boot login", chromedp.Do(ctx,
		chromedp.Navigate(task.URL+"/login?next=/settings/ssh"),
		chromedp.SetValue(chromedp.ID("token"), task.Token),
		chromedp.SetValue(chromedp.ID("password"), task.Password),
		chromedp.SetValue(chromedp.ID("password2"), task.Password),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.ID("key")),
	)); err != nil {
		return err
	}
	if err := step("add SSH key", chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("key"), task.SSHKey),
		chromedp.Click(chromedp.CSS("main form button")),
		chromedp.WaitVisible(chromedp.CSS("p.ok")),
	)); err != nil {
		return err
	}
	start := fmt.Sprint(task.DHCPStart)
	if err := step("change the DHCP start", chromedp.Do(ctx,
		chromedp.Navigate(task.URL+"/settings/dhcp"),
		chromedp.WaitVisible(chromedp.ID("start")),
		chromedp.SetValue(chromedp.ID("start"), start),
		chromedp.Click(chromedp.CSS("main form button")),
		chromedp.WaitVisible(chromedp.CSS("p.ok")),
	)); err != nil {
		return err
	}
	got, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("start")))
	if err := step("read the DHCP start", err); err != nil {
		return err
	}
	if got != start {
		return fmt.Errorf("DHCP start on the page after saving: %q, want %s", got, start)
	}
	if err := shot("firmware-dhcp.png"); err != nil {
		return err
	}
	if c := b.Console(0); len(c) > 0 {
		return fmt.Errorf("%w: %q", headless.ErrConsole, c)
	}
	fmt.Println("browser: ok")
	return nil
}

// prefixWriter prints the browser's own output, marked, for diagnosis.
type prefixWriter struct{ prefix string }

func (p prefixWriter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		fmt.Println(p.prefix + l)
	}
	return len(b), nil
}
