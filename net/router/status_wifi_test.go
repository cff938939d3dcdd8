package router_test

import (
	"io"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/net/router"
)

// The status page shows the Wi-Fi statistics the AP writes, escaped, in
// the page and in status.json.
func TestStatusWifi(t *testing.T) {
	r, err := router.New(router.Config{LAN: []router.Port{{Name: "lan1", NIC: &nullNIC{}}}})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string { return serveStatus(r, "GET", path).body.String() }
	if strings.Contains(get("/"), "Wi-Fi") {
		t.Error("Wi-Fi section without an AP")
	}
	r.SetWifiStats(func(w io.Writer) error {
		_, err := io.WriteString(w, "station 02:00:00:00:02:01  rate MCS15/40/SGI <x>\n")
		return err
	})
	if page := get("/"); !strings.Contains(page, "<h2>Wi-Fi</h2>") || !strings.Contains(page, "rate MCS15/40/SGI &lt;x&gt;") {
		t.Errorf("page:\n%s", page)
	}
	if js := get("/status.json"); !strings.Contains(js, `"wifi":"station 02:00:00:00:02:01`) {
		t.Errorf("status.json: %s", js)
	}
}
