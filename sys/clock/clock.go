// Package clock keeps the firmware's wall clock on boards without a
// battery-backed RTC: the time comes from SNTP (net/sntp steps or slews
// it through a Clock), and is saved now and then so a reboot starts from
// the last known time instead of 1970.
//
// System is the firmware's clock. On bare-metal MIPS (GOARCH mips or
// mipsle, the gowrt kernel) it sets the kernel's CLOCK_REALTIME with
// clock_settime, so time.Now() in every package follows. In sim mode (any
// other GOARCH: a host process) it never touches the host's clock: it keeps
// an offset and its Now() is time.Now() plus that offset, so only code that
// asks this clock sees the change.
package clock

import (
	"time"
)

// Clock is what the SNTP client and the rest of the firmware use.
type Clock interface {
	// Now returns the current wall time.
	Now() time.Time
	// Step sets the wall clock to to at once, and marks it synced.
	Step(to time.Time) error
	// Slew moves the wall clock by offset gradually (at most MaxSlewPPM),
	// replacing any slew still in progress, and marks it synced.
	Slew(offset time.Duration) error
	// Synced reports whether the clock was set by Step or Slew (from a
	// time source), as opposed to only restored from a saved value.
	Synced() bool
}

// MaxSlewPPM is the fastest a slew moves the clock: 500 µs per second, the
// limit of Linux's adjtime and ntpd's slew (RFC 5905 §11.3 PPM tolerance
// of 500 ppm; Linux kernel/time/ntp.c MAXPHASE/ADJ_OFFSET_SINGLESHOT use the
// same 500 ppm rate), so an offset of up to the 128 ms step threshold is
// absorbed in at most 256 s.
const MaxSlewPPM = 500

// slewed returns how much of a slew of total started at start has been
// applied at now: MaxSlewPPM of the elapsed time, up to total.
func slewed(total time.Duration, start, now time.Time) time.Duration {
	el := now.Sub(start)
	if el <= 0 || total == 0 {
		return 0
	}
	limit := el / (1_000_000 / MaxSlewPPM)
	if total > 0 {
		return min(total, limit)
	}
	return max(total, -limit)
}
