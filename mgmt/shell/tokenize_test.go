package shell

import (
	"reflect"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
		err  error
	}{
		{"", nil, nil},
		{"   \t ", nil, nil},
		{"ls", [][]string{{"ls"}}, nil},
		{"  a  b\tc ", [][]string{{"a", "b", "c"}}, nil},
		{"a;b", [][]string{{"a"}, {"b"}}, nil},
		{"a ; ; b c;", [][]string{{"a"}, {"b", "c"}}, nil},
		{"cfg set dhcp.lan.start=120; cfg commit", [][]string{{"cfg", "set", "dhcp.lan.start=120"}, {"cfg", "commit"}}, nil},
		{`echo 'a b' "c d"`, [][]string{{"echo", "a b", "c d"}}, nil},
		{`echo 'a;b#c' x`, [][]string{{"echo", "a;b#c", "x"}}, nil},
		{`echo "it's" 'say "hi"'`, [][]string{{"echo", "it's", `say "hi"`}}, nil},
		{`echo a\ b a\;b \#c`, [][]string{{"echo", "a b", "a;b", "#c"}}, nil},
		{`echo "a\"b\\c\d\$"`, [][]string{{"echo", `a"b\c\d$`}}, nil},
		{`echo 'a\b'`, [][]string{{"echo", `a\b`}}, nil},
		{`echo "" ''`, [][]string{{"echo", "", ""}}, nil},
		{`x=''y"z"'w'`, [][]string{{"x=yzw"}}, nil},
		{"a # comment; b", [][]string{{"a"}}, nil},
		{"# only a comment", nil, nil},
		{"a#b c", [][]string{{"a#b", "c"}}, nil},
		{"a \\\nb", [][]string{{"a", "b"}}, nil},
		{`cfg set system.hostname="my router"`, [][]string{{"cfg", "set", "system.hostname=my router"}}, nil},
		{`echo 'open`, nil, ErrUnterminated},
		{`echo "open`, nil, ErrUnterminated},
		{`echo "open\"`, nil, ErrUnterminated},
		{`echo \`, nil, ErrTrailingEscape},
		{strings.Repeat("a", MaxLine+1), nil, ErrLineTooLong},
	} {
		got, err := Tokenize(tc.line)
		if err != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Tokenize(%q) = %q, %v; want %q, %v", tc.line, got, err, tc.want, tc.err)
		}
	}
	if got, err := Tokenize(strings.Repeat("a", MaxLine)); err != nil || len(got[0][0]) != MaxLine {
		t.Errorf("a line of MaxLine bytes: %v", err)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"a b;c", `'x' "y\"" \z # c`, `"unterminated`, "a\\\nb", ";;;", "#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, err := Tokenize(line)
		if err != nil {
			return
		}
		for _, c := range cmds {
			if len(c) == 0 {
				t.Fatalf("empty command from %q", line)
			}
		}
		// Quoting every word and joining must give back the same commands.
		var b strings.Builder
		for _, c := range cmds {
			for _, w := range c {
				b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "' ")
			}
			b.WriteString(";")
		}
		if len(b.String()) > MaxLine {
			return
		}
		again, err := Tokenize(b.String())
		if err != nil || !reflect.DeepEqual(again, cmds) {
			t.Fatalf("%q: requoted %q gives %q, %v; want %q", line, b.String(), again, err, cmds)
		}
	})
}
