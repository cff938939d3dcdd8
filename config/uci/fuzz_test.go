package uci

import (
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever it accepts
// is written back as text that parses to an equal File.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		networkText,
		"config t 'n'\n\toption a 'b'\n\tlist l \"x\\\"y\"\n",
		"package p\nc t; o a b; l c d\n",
		"config t\noption a 'multi\nline'\noption b join\\\ned\n",
		"config t\noption a 'it'\\''s' # comment\n",
		"config 'we\"ird' n\noption o '\r'\n",
		"config t n\nconfig t n\nlist a ''\noption b c\nlist b d\n",
	} {
		f.Add(seed)
	}
	lim := Limits{MaxBytes: 4096, MaxCommand: 512, MaxSections: 16, MaxOptions: 16, MaxValues: 64}
	f.Fuzz(func(t *testing.T, text string) {
		file, err := ParseLimits("fuzz", strings.NewReader(text), lim)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		var b strings.Builder
		if _, err := file.WriteTo(&b); err != nil {
			t.Fatalf("parsed file cannot be written: %v", err)
		}
		again, err := Parse("fuzz", strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("written text does not parse: %v\n%s", err, b.String())
		}
		if !file.Equal(again) {
			t.Fatalf("round trip changed the file:\n%q\n%q", b.String(), again.String())
		}
	})
}
