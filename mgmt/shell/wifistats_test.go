package shell

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// wifiHost is a host with an access point.
type wifiHost struct {
	fakeHost
}

func (w *wifiHost) WifiStats(out io.Writer) error {
	_, err := fmt.Fprintln(out, "station 02:00:00:00:02:01  rate MCS15/40/SGI")
	return err
}

// athstats and wifistats exist only on a host with Wi-Fi, and show what
// it writes.
func TestAthstats(t *testing.T) {
	for _, name := range []string{"athstats", "wifistats"} {
		st, out := run(&wifiHost{}, name, "")
		if st != StatusOK || !strings.Contains(out, "rate MCS15/40/SGI") {
			t.Errorf("%s: status %d, output %q", name, st, out)
		}
		if st, _ := run(&fakeHost{}, name, ""); st != StatusNotFound {
			t.Errorf("%s on a host without Wi-Fi: status %d", name, st)
		}
	}
	if st, out := run(&wifiHost{}, "athstats -x", ""); st == StatusOK || !strings.Contains(out, "usage") {
		t.Errorf("athstats -x: status %d, %q", st, out)
	}
}
