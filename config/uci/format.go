package uci

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// WriteTo writes the file in UCI syntax, as `uci export` lays it out (a
// blank line between sections, options indented by a tab, values in
// single quotes). It fails, writing nothing, if the File holds something
// the syntax cannot carry back: an invalid name or type, a NUL byte, an
// option with no value or an empty option value (which Parse would read
// as a deletion).
func (f *File) WriteTo(w io.Writer) (int64, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	cw := &countWriter{w: w}
	bw := bufio.NewWriter(cw)
	if f.Package != "" {
		fmt.Fprintf(bw, "package %s\n\n", quote(f.Package))
	}
	for i, s := range f.Sections {
		if i > 0 {
			bw.WriteByte('\n')
		}
		bw.WriteString("config ")
		bw.WriteString(word(s.Type))
		if s.Name != "" {
			bw.WriteByte(' ')
			bw.WriteString(quote(s.Name))
		}
		bw.WriteByte('\n')
		for _, o := range s.Options {
			cmd := "\toption "
			if o.List {
				cmd = "\tlist "
			}
			for _, v := range o.Values {
				bw.WriteString(cmd)
				bw.WriteString(o.Name)
				bw.WriteByte(' ')
				bw.WriteString(quote(v))
				bw.WriteByte('\n')
			}
		}
	}
	err := bw.Flush()
	return cw.n, err
}

// String is the file in UCI syntax (see WriteTo), or an error message
// starting "uci:" if it cannot be written.
func (f *File) String() string {
	var b strings.Builder
	if _, err := f.WriteTo(&b); err != nil {
		return err.Error()
	}
	return b.String()
}

func (f *File) check() error {
	if f.Package != "" && !validPackage(f.Package) {
		return fmt.Errorf("uci: invalid package name %q", f.Package)
	}
	names := map[string]bool{}
	for _, s := range f.Sections {
		if !validType(s.Type) {
			return fmt.Errorf("uci: invalid section type %q", s.Type)
		}
		if s.Name != "" {
			if !validName(s.Name) {
				return fmt.Errorf("uci: invalid section name %q", s.Name)
			}
			if names[s.Name] {
				return fmt.Errorf("uci: two sections named %q", s.Name)
			}
			names[s.Name] = true
		}
		seen := map[string]bool{}
		for _, o := range s.Options {
			if !validName(o.Name) {
				return fmt.Errorf("uci: invalid option name %q", o.Name)
			}
			if seen[o.Name] {
				return fmt.Errorf("uci: two options named %q in one section", o.Name)
			}
			seen[o.Name] = true
			if len(o.Values) == 0 || !o.List && (len(o.Values) != 1 || o.Values[0] == "") {
				return fmt.Errorf("uci: option %q needs exactly one non-empty value", o.Name)
			}
			for _, v := range o.Values {
				if strings.IndexByte(v, 0) >= 0 {
					return errors.New("uci: value holds a NUL byte")
				}
			}
		}
	}
	return nil
}

// quote single-quotes a value; a single quote inside closes the quotes,
// is escaped and reopens them, as libuci's uci_escape writes it.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// word writes a type bare when it is plain, quoted otherwise (a type may
// hold any printable character, including quotes and '#').
func word(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '_' && c != '-' && c != '.' {
			return quote(s)
		}
	}
	return s
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
