package uci

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// A network file in the layout OpenWrt ships (written for this test):
// tabs, bare and quoted values, named and anonymous sections, lists,
// comments.
const networkText = `
config interface 'loopback'
	option device 'lo'
	option proto 'static'
	option ipaddr '127.0.0.1'
	option netmask '255.0.0.0'

config globals 'globals'
	option ula_prefix 'fd3c:1a2b:3c4d::/48'

config device
	option name 'br-lan'
	option type 'bridge'
	list ports 'lan1'
	list ports 'lan2'
	list ports "lan3"

# the LAN
config interface 'lan'
	option device	br-lan
	option proto	static
	option ipaddr	192.168.1.1   # router address
	option netmask	255.255.255.0

config interface 'wan'
	option device 'wan'
	option proto 'dhcp'
`

func TestParseNetwork(t *testing.T) {
	f, err := Parse("network", strings.NewReader(networkText))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sections) != 5 {
		t.Fatalf("%d sections, want 5", len(f.Sections))
	}
	lan := f.Section("lan")
	if lan == nil || lan.Type != "interface" || lan.Line != 19 {
		t.Fatalf("lan = %+v", lan)
	}
	if v, ok := lan.Get("ipaddr"); !ok || v != "192.168.1.1" {
		t.Errorf("lan ipaddr = %q %v", v, ok)
	}
	if o := lan.Option("netmask"); o == nil || o.Line != 23 {
		t.Errorf("netmask option = %+v", o)
	}
	dev := f.Section("@device[0]")
	if dev == nil || dev.Name != "" {
		t.Fatalf("@device[0] = %+v", dev)
	}
	if got := dev.List("ports"); !reflect.DeepEqual(got, []string{"lan1", "lan2", "lan3"}) {
		t.Errorf("ports = %q", got)
	}
	if v, _ := dev.Get("ports"); v != "lan1 lan2 lan3" {
		t.Errorf("Get(list) = %q", v)
	}
	if f.Section("@interface[-1]") != f.Section("wan") || f.Section("@interface[1]") != lan {
		t.Error("@interface[...] addressing wrong")
	}
	if f.Section("@interface[3]") != nil || f.Section("@nope[0]") != nil || f.Section("@interface[x]") != nil {
		t.Error("bad references resolved")
	}
	if got := len(f.Find("interface")); got != 3 {
		t.Errorf("Find(interface) = %d", got)
	}
	if f.Ref(dev) != "@device[0]" || f.Ref(lan) != "lan" {
		t.Errorf("Ref = %q %q", f.Ref(dev), f.Ref(lan))
	}
	roundTrip(t, f)
}

func TestQuoting(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`word`, "word"},
		{`'single quoted  spaces'`, "single quoted  spaces"},
		{`"double \"escaped\" \\ back"`, `double "escaped" \ back`},
		{`"no C escapes \n\t"`, "no C escapes nt"},
		{`'a'"b"c`, "abc"},
		{`'it'\''s'`, "it's"},
		{`'not # a comment'`, "not # a comment"},
		{`unquoted#comment`, "unquoted"},
		{`'semi;colon'`, "semi;colon"},
		{`back\ slash`, "back slash"},
		{`'spans` + "\n" + `lines'`, "spans\nlines"},
		{`"double` + "\n" + `lines"`, "double\nlines"},
		{`joined\` + "\n" + `line`, "joinedline"},
		{`"joined\` + "\n" + `in quotes"`, "joinedin quotes"},
		{`'$dollar and \backslash'`, `$dollar and \backslash`},
		{`crlf` + "\r", "crlf"},
	} {
		f, err := Parse("t", strings.NewReader("config t\n\toption v "+tc.in+"\n"))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if v, _ := f.Sections[0].Get("v"); v != tc.want {
			t.Errorf("%s: got %q, want %q", tc.in, v, tc.want)
		}
		roundTrip(t, f)
	}
}

func TestSemantics(t *testing.T) {
	const text = `package firewall
config zone 'z'; option name lan
c zone z
	o input ACCEPT
	o name lan2
	l network lan
	list network guest
	option masq 1
	option masq ''
	option conv one
	list conv two
config rule
	option name x
	option name ''
	list empty ''
`
	f, err := Parse("firewall", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if f.Package != "firewall" || len(f.Sections) != 2 {
		t.Fatalf("package %q, %d sections", f.Package, len(f.Sections))
	}
	z := f.Sections[0]
	var names []string
	for _, o := range z.Options {
		names = append(names, o.Name)
	}
	// name was set again (moves to the end, libuci list.c uci_set),
	// masq deleted by its empty value, conv turned into a list.
	if want := []string{"input", "name", "network", "conv"}; !reflect.DeepEqual(names, want) {
		t.Errorf("options %q, want %q", names, want)
	}
	if v, _ := z.Get("name"); v != "lan2" {
		t.Errorf("name = %q", v)
	}
	if c := z.Option("conv"); !c.List || !reflect.DeepEqual(c.Values, []string{"one", "two"}) {
		t.Errorf("conv = %+v", c)
	}
	r := f.Sections[1]
	if _, ok := r.Get("name"); ok {
		t.Error("empty option value did not delete")
	}
	if got := r.List("empty"); !reflect.DeepEqual(got, []string{""}) {
		t.Errorf("empty list element = %q", got)
	}
	roundTrip(t, f)
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\n\noption a b\n", "f:3: option outside a section"},
		{"list a b\n", "f:1: list outside a section"},
		{"config\n", "f:1: config without type"},
		{"config 'a b'\n", "f:1: invalid character in section type"},
		{"config t 'bad-name'\n", "f:1: invalid character in section name"},
		{"config t\noption\n", "f:2: option without name"},
		{"config t\noption 'a.b' c\n", "f:2: invalid character in option name"},
		{"config t\noption a b c\n", "f:2: too many arguments"},
		{"config t\n\toptions a b\n", `f:2: invalid command "options"`},
		{"config t\noption a 'open\n\n", "f:2: unterminated '"},
		{"config t\noption a \"open\n", `f:2: unterminated "`},
		{"config a n\nconfig b n\n", "f:2: section n of type a redefined with type b"},
		{"package a\npackage b\n", `f:2: second package "b"`},
		{"config t\noption a \x00\n", "f:2: NUL byte"},
	} {
		_, err := Parse("f", strings.NewReader(tc.in))
		var e *Error
		if err == nil || !errors.As(err, &e) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want prefix %q", tc.in, err, tc.want)
		}
	}
}

func TestLimits(t *testing.T) {
	lim := Limits{MaxBytes: 100, MaxCommand: 20, MaxSections: 2, MaxOptions: 2, MaxValues: 3}
	for _, tc := range []struct{ in, want string }{
		{strings.Repeat("#", 101), "f: file longer than 100 bytes"},
		{"config t\noption a '" + strings.Repeat("x", 30) + "'\n", "f:2: command longer than 20 bytes"},
		{"config t\noption a \\\n" + strings.Repeat("x", 30) + "\n", "f:3: command longer than 20 bytes"},
		{"config a\nconfig b\nconfig c\n", "f:3: more than 2 sections"},
		{"config a\noption a 1\noption b 1\noption c 1\n", "f:4: more than 2 options in one section"},
		{"config a\nlist a 1\nlist a 1\nlist a 1\nlist a 1\n", "f:5: more than 3 values"},
	} {
		_, err := ParseLimits("f", strings.NewReader(tc.in), lim)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want prefix %q", tc.in, err, tc.want)
		}
	}
}

func TestEdit(t *testing.T) {
	f := &File{Name: "firewall"}
	s, err := f.Add("rule", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("name", "Allow-SSH"); err != nil {
		t.Fatal(err)
	}
	s.AddList("dest_port", "22")
	s.AddList("dest_port", "2222")
	s.Set("target", "it's ACCEPT")
	n, _ := f.Add("zone", "lan")
	n.Set("name", "lan")
	if _, err := f.Add("rule", "lan"); err == nil {
		t.Error("Add with a name of another type succeeded")
	}
	if again, _ := f.Add("zone", "lan"); again != n {
		t.Error("Add of an existing name made a new section")
	}
	if s.Set("bad-name", "x") == nil || s.Set("x", "a\x00") == nil || s.AddList("", "x") == nil {
		t.Error("invalid Set/AddList accepted")
	}
	want := "config rule\n\toption name 'Allow-SSH'\n\tlist dest_port '22'\n\tlist dest_port '2222'\n\toption target 'it'\\''s ACCEPT'\n\nconfig zone 'lan'\n\toption name 'lan'\n"
	if got := f.String(); got != want {
		t.Errorf("String:\n%s\nwant:\n%s", got, want)
	}
	roundTrip(t, f)
	if !s.Delete("name") || s.Delete("name") {
		t.Error("Delete")
	}
	if !f.Remove(n) || f.Remove(n) || len(f.Sections) != 1 {
		t.Error("Remove")
	}
	bad := &File{Sections: []*Section{{Type: "t", Options: []Option{{Name: "a"}}}}}
	if _, err := bad.WriteTo(&strings.Builder{}); err == nil {
		t.Error("option without value written")
	}
}

func roundTrip(t *testing.T, f *File) {
	t.Helper()
	text := f.String()
	g, err := Parse(f.Name, strings.NewReader(text))
	if err != nil {
		t.Fatalf("reparse of\n%s\n: %v", text, err)
	}
	if !f.Equal(g) {
		t.Fatalf("round trip changed the file:\n%s\nreparsed:\n%s", text, g.String())
	}
}
