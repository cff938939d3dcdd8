package syslog

import (
	"strings"
	"testing"
)

func TestWriterLines(t *testing.T) {
	r := NewRing(1 << 16)
	w := r.Writer(Kern, Notice, "kernel")
	for _, p := range []string{
		"[    0.000000] Linux version\n[    0.1",
		"00000] CPU0 revision",
		" is: 00019374\r\n\n\r\n",
		"no newline yet",
	} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	msgs := func() []string {
		var s []string
		for _, rec := range r.Records(All()) {
			if rec.Facility != Kern || rec.Severity != Notice || rec.Service != "kernel" {
				t.Errorf("record %+v: want kern.notice kernel", rec)
			}
			s = append(s, rec.Msg)
		}
		return s
	}
	want := []string{"[    0.000000] Linux version", "[    0.100000] CPU0 revision is: 00019374"}
	if got := msgs(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines %q, want %q (the partial line is held back)", got, want)
	}
	w.Write([]byte(" ... done\n"))
	if got := msgs(); len(got) != 3 || got[2] != "no newline yet ... done" {
		t.Fatalf("lines %q: partial line not completed", got)
	}

	// A run without newline longer than MaxLine is logged in MaxLine pieces.
	long := strings.Repeat("a", MaxLine) + strings.Repeat("b", MaxLine) + "c\n"
	w.Write([]byte(long))
	got := msgs()[3:]
	if len(got) != 3 || got[0] != strings.Repeat("a", MaxLine) || got[1] != strings.Repeat("b", MaxLine) || got[2] != "c" {
		t.Fatalf("long line split into %d pieces: %.20q...", len(got), got)
	}
}
