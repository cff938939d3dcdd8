package syslog

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"
)

// LogreadUsage is logread's usage text, in the error for a bad flag.
const LogreadUsage = `usage: logread [-f] [-l N] [-e PATTERN] [-p SEVERITY] [-s SERVICE]
  -f           follow: print new messages as they arrive
  -l N         only the last N messages
  -e PATTERN   only messages containing PATTERN
  -p SEVERITY  only messages at least this severe (emerg alert crit err warn notice info debug, or 0-7)
  -s SERVICE   only messages of this service`

// Logread is the shell's logread command. Its flags are those of
// OpenWrt's logread that a shell user reaches for (-f, -l, -e), plus -p
// for a severity and -s for a service (OpenWrt's logread uses these two
// letters for a PID file and a ubus socket, which gowrt has no use for).
// Lines look like OpenWrt's:
//
//	Tue Dec  1 16:31:56 2026 daemon.info dhcpd: message
//
// (ctime-style local time, facility.severity, service: message; see
// OpenWrt ubox log/logread.c). -e matches a plain substring of the
// service or message. A bad flag or argument is an error carrying
// LogreadUsage, and nothing is printed. With -f it returns nil when ctx
// is done.
func (r *Ring) Logread(ctx context.Context, w io.Writer, args []string) error {
	f, follow, err := parseLogreadArgs(args)
	if err != nil {
		return err
	}
	var line []byte
	print := func(rec Record) error {
		line = AppendLogreadLine(line[:0], rec)
		_, err := w.Write(line)
		return err
	}
	if !follow {
		for _, rec := range r.Records(f) {
			if err := print(rec); err != nil {
				return err
			}
		}
		return nil
	}
	err = r.Follow(ctx, f, print)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// parseLogreadArgs turns logread's arguments into a filter.
func parseLogreadArgs(args []string) (f Filter, follow bool, err error) {
	fs := flag.NewFlagSet("logread", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var sev, last string
	fs.BoolVar(&follow, "f", false, "")
	fs.StringVar(&last, "l", "", "")
	fs.StringVar(&f.Contains, "e", "", "")
	fs.StringVar(&sev, "p", "", "")
	fs.StringVar(&f.Service, "s", "", "")
	if err := fs.Parse(args); err != nil {
		return f, false, usageError(err.Error())
	}
	if fs.NArg() > 0 {
		return f, false, usageError(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	f.Facility = AnyFacility
	if last != "" {
		n, err := strconv.Atoi(last)
		if err != nil || n < 0 {
			return f, false, usageError(fmt.Sprintf("-l %q: not a count", last))
		}
		f.Last = n
	}
	if sev != "" {
		s, ok := ParseSeverity(sev)
		if !ok {
			return f, false, usageError(fmt.Sprintf("-p %q: not a severity", sev))
		}
		f.MinSeverity = s
		f.EmergOnly = s == Emerg
	}
	return f, follow, nil
}

func usageError(msg string) error {
	return fmt.Errorf("logread: %s\n%s", msg, LogreadUsage)
}

// AppendLogreadLine appends rec as logread prints it, newline included.
func AppendLogreadLine(dst []byte, rec Record) []byte {
	dst = rec.Time.AppendFormat(dst, time.ANSIC) // ctime(3) without its newline
	dst = append(dst, ' ')
	dst = append(dst, rec.Facility.String()...)
	dst = append(dst, '.')
	dst = append(dst, rec.Severity.String()...)
	dst = append(dst, ' ')
	if rec.Service != "" {
		dst = append(dst, rec.Service...)
		dst = append(dst, ": "...)
	}
	dst = append(dst, rec.Msg...)
	return append(dst, '\n')
}
