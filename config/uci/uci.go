// Package uci reads and writes OpenWrt's UCI configuration files (the
// files under /etc/config): sections opened by `config <type> ['<name>']`
// holding `option <name> '<value>'` and `list <name> '<value>'` lines.
//
// The syntax accepted is libuci's (uci file.c, util.c, list.c), so a file
// that OpenWrt's `uci` reads is read here with the same meaning:
//
//   - Commands are `config`, `option`, `list` and `package`, or their
//     one-letter abbreviations `c`, `o`, `l`, `p`. A `;` ends a command like
//     the end of a line does, so several commands can share a line.
//   - An argument is a run of unquoted, 'single-quoted' and "double-quoted"
//     parts with no space between them, which are joined ('a'"b"c is abc).
//     Nothing is special inside single quotes. Outside them a backslash
//     takes the next character literally ("\"" is a quote, \\ a backslash;
//     there are no C escapes such as \n). A backslash at the end of a line
//     joins the next line to it. Quoted parts may span lines; the newline
//     is part of the value.
//   - `#` outside quotes starts a comment that runs to the end of the line.
//   - Section and option names are letters, digits and '_'; a type is any
//     printable ASCII without spaces; a package name may also hold '-'.
//   - A section without a name is anonymous; it is addressed by type and
//     position, `@rule[0]` (the first rule) or `@rule[-1]` (the last).
//   - A named section that appears again is the same section: its options
//     are merged and its type is the last one given (a different type is
//     an error, as with `uci`'s default strict mode).
//   - `option` sets a value, replacing an earlier option or list of that
//     name; an empty value deletes the option. `list` appends a value; a
//     `list` after an `option` of the same name turns it into a list whose
//     first element is the option's value. An option that is set again
//     moves to the end of its section, as libuci does.
//
// Parse reads at most DefaultLimits bytes, sections and values, so hostile
// input cannot exhaust memory; ParseLimits takes other limits. Errors name
// the file and line: "firewall:12: option outside a section".
//
// WriteTo (and File.String) produce the text `uci export` would: values
// in single quotes, a single quote inside a value closing the quotes,
// escaped, and reopening them:
//
//	option name 'it'\''s'
//
// Parsing the output gives back an equal File (Equal); comments and
// layout are not kept.
package uci

import (
	"fmt"
	"strconv"
	"strings"
)

// File is a parsed configuration file: one UCI package.
type File struct {
	// Name names the file in error messages, usually the package name
	// ("firewall").
	Name string
	// Package is the name a `package` command in the file gave, if any.
	Package  string
	Sections []*Section
}

// Section is one `config` block.
type Section struct {
	Type string
	// Name is empty for an anonymous section.
	Name    string
	Options []Option
	// Line is where the section was opened (1-based; 0 if built in code).
	Line int
}

// Option is one option or list of a section.
type Option struct {
	Name string
	// Values holds one value for an option, every element for a list.
	Values []string
	// List is true for a list (even of one element).
	List bool
	// Line is where the option (or the list's first element) was set.
	Line int
}

// Value is the option's value, a list's elements joined by spaces (what
// `uci get` prints for a list).
func (o *Option) Value() string {
	if len(o.Values) == 1 {
		return o.Values[0]
	}
	return strings.Join(o.Values, " ")
}

// Option returns the named option, or nil.
func (s *Section) Option(name string) *Option {
	for i := range s.Options {
		if s.Options[i].Name == name {
			return &s.Options[i]
		}
	}
	return nil
}

// Get returns an option's value (a list's elements joined by spaces) and
// whether it is set.
func (s *Section) Get(name string) (string, bool) {
	o := s.Option(name)
	if o == nil {
		return "", false
	}
	return o.Value(), true
}

// List returns a list's elements, or an option's single value as a list
// of one, or nil if the option is not set.
func (s *Section) List(name string) []string {
	o := s.Option(name)
	if o == nil {
		return nil
	}
	return o.Values
}

// Set sets an option to one value, replacing an option or list of that
// name; an empty value deletes it (libuci's uci_set).
func (s *Section) Set(name, value string) error {
	if !validName(name) {
		return fmt.Errorf("uci: invalid option name %q", name)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("uci: option %s: value holds a NUL byte", name)
	}
	s.set(name, value, 0)
	return nil
}

// AddList appends a value to a list, turning an option of that name into
// a list first (libuci's uci_add_list).
func (s *Section) AddList(name, value string) error {
	if !validName(name) {
		return fmt.Errorf("uci: invalid option name %q", name)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("uci: list %s: value holds a NUL byte", name)
	}
	s.addList(name, value, 0)
	return nil
}

// Delete removes an option or list; it reports whether one was there.
func (s *Section) Delete(name string) bool {
	for i := range s.Options {
		if s.Options[i].Name == name {
			s.Options = append(s.Options[:i], s.Options[i+1:]...)
			return true
		}
	}
	return false
}

func (s *Section) set(name, value string, line int) {
	s.Delete(name)
	if value == "" {
		return
	}
	s.Options = append(s.Options, Option{Name: name, Values: []string{value}, Line: line})
}

func (s *Section) addList(name, value string, line int) {
	if o := s.Option(name); o != nil {
		if o.List {
			o.Values = append(o.Values, value)
			return
		}
		// libuci makes a new list at the end holding the old value first.
		prev := *o
		s.Delete(name)
		s.Options = append(s.Options, Option{Name: name, Values: []string{prev.Values[0], value}, List: true, Line: prev.Line})
		return
	}
	s.Options = append(s.Options, Option{Name: name, Values: []string{value}, List: true, Line: line})
}

// Find returns the sections of a type, in file order.
func (f *File) Find(typ string) []*Section {
	var out []*Section
	for _, s := range f.Sections {
		if s.Type == typ {
			out = append(out, s)
		}
	}
	return out
}

// Section returns the section a reference names: a section name, or
// "@type[index]" with a negative index counting from the end.
func (f *File) Section(ref string) *Section {
	if !strings.HasPrefix(ref, "@") {
		for _, s := range f.Sections {
			if s.Name == ref && ref != "" {
				return s
			}
		}
		return nil
	}
	open := strings.IndexByte(ref, '[')
	if open < 0 || !strings.HasSuffix(ref, "]") {
		return nil
	}
	typ := ref[1:open]
	idx, err := strconv.Atoi(ref[open+1 : len(ref)-1])
	if err != nil {
		return nil
	}
	all := f.Find(typ)
	if idx < 0 {
		idx += len(all)
	}
	if idx < 0 || idx >= len(all) {
		return nil
	}
	return all[idx]
}

// Ref names a section the way `uci show` does: its name, or
// "@type[index]" for an anonymous one. It returns "" for a section not in
// the file.
func (f *File) Ref(s *Section) string {
	n := 0
	for _, t := range f.Sections {
		if t == s {
			if s.Name != "" {
				return s.Name
			}
			return "@" + s.Type + "[" + strconv.Itoa(n) + "]"
		}
		if t.Type == s.Type {
			n++
		}
	}
	return ""
}

// Add appends a section; an empty name makes an anonymous one. Adding a
// name that exists returns that section (if the type agrees), as a
// repeated `config` line does.
func (f *File) Add(typ, name string) (*Section, error) {
	if !validType(typ) {
		return nil, fmt.Errorf("uci: invalid section type %q", typ)
	}
	if name != "" && !validName(name) {
		return nil, fmt.Errorf("uci: invalid section name %q", name)
	}
	if name != "" {
		if s := f.Section(name); s != nil {
			if s.Type != typ {
				return nil, fmt.Errorf("uci: section %s has type %s, not %s", name, s.Type, typ)
			}
			return s, nil
		}
	}
	s := &Section{Type: typ, Name: name}
	f.Sections = append(f.Sections, s)
	return s, nil
}

// Remove deletes a section from the file; it reports whether it was there.
func (f *File) Remove(s *Section) bool {
	for i, t := range f.Sections {
		if t == s {
			f.Sections = append(f.Sections[:i], f.Sections[i+1:]...)
			return true
		}
	}
	return false
}

// Equal reports whether two files hold the same package, sections and
// values in the same order. Line numbers and File.Name are not compared.
func (f *File) Equal(g *File) bool {
	if f.Package != g.Package || len(f.Sections) != len(g.Sections) {
		return false
	}
	for i, s := range f.Sections {
		t := g.Sections[i]
		if s.Type != t.Type || s.Name != t.Name || len(s.Options) != len(t.Options) {
			return false
		}
		for j := range s.Options {
			a, b := &s.Options[j], &t.Options[j]
			if a.Name != b.Name || a.List != b.List || len(a.Values) != len(b.Values) {
				return false
			}
			for k := range a.Values {
				if a.Values[k] != b.Values[k] {
					return false
				}
			}
		}
	}
	return true
}

// validName is libuci's uci_validate_name: letters, digits and '_'.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// validPackage is libuci's uci_validate_package: a name that may hold '-'.
func validPackage(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// validType is libuci's uci_validate_type: printable ASCII, no spaces.
func validType(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 33 || c > 126 {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
