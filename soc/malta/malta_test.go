package malta

import (
	"testing"
	"time"
)

func TestDaysSinceEpoch(t *testing.T) {
	for _, d := range []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
		time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		got := DaysSinceEpoch(int64(d.Year()), int64(d.Month()), int64(d.Day()))
		if want := d.Unix() / 86400; got != want {
			t.Errorf("%v: got %d want %d", d, got, want)
		}
	}
}
