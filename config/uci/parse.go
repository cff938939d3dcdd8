package uci

import (
	"bytes"
	"fmt"
	"io"
)

// Limits bound what Parse accepts, so a hostile file cannot make it use
// unbounded memory.
type Limits struct {
	MaxBytes    int // size of the whole file
	MaxCommand  int // bytes of one command, continuations and quoted newlines included
	MaxSections int // sections in the file
	MaxOptions  int // distinct options and lists in one section
	MaxValues   int // option values and list elements in the file
}

// DefaultLimits are far above any router's configuration (OpenWrt's
// largest files, dhcp with static leases, are tens of kilobytes) and far
// below what would hurt a 32 MiB router.
var DefaultLimits = Limits{
	MaxBytes:    1 << 20,
	MaxCommand:  64 << 10,
	MaxSections: 4096,
	MaxOptions:  1024,
	MaxValues:   65536,
}

// Error is a syntax error or an exceeded limit, with where it happened.
type Error struct {
	File string
	Line int // 1-based; 0 when the error is about the whole file
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Parse reads a UCI file within DefaultLimits. name names the file in
// errors and in File.Name.
func Parse(name string, r io.Reader) (*File, error) {
	return ParseLimits(name, r, DefaultLimits)
}

// ParseLimits reads a UCI file within lim.
func ParseLimits(name string, r io.Reader, lim Limits) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(lim.MaxBytes)+1))
	if err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if len(data) > lim.MaxBytes {
		return nil, &Error{File: name, Msg: fmt.Sprintf("file longer than %d bytes", lim.MaxBytes)}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		// libuci reads C strings; a NUL would silently cut a line short.
		return nil, &Error{File: name, Line: 1 + bytes.Count(data[:i], []byte{'\n'}), Msg: "NUL byte in file"}
	}
	p := parser{data: data, line: 1, lim: lim, f: &File{Name: name}, named: map[string]*Section{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.f, nil
}

type parser struct {
	data     []byte
	pos      int
	line     int
	cmdStart int // offset where the current command began
	lim      Limits
	f        *File
	sec      *Section // the section options go to
	named    map[string]*Section
	values   int
	buf      []byte // argument being built, reused
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return &Error{File: p.f.Name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// isSpace is C's isspace without '\n', which ends a command here.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) && isSpace(p.data[p.pos]) {
		p.pos++
	}
}

func (p *parser) skipComment() {
	for p.pos < len(p.data) && p.data[p.pos] != '\n' {
		p.pos++
	}
}

func (p *parser) parse() error {
	for {
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil
		}
		switch p.data[p.pos] {
		case '\n':
			p.pos++
			p.line++
			continue
		case ';':
			p.pos++
			continue
		case '#':
			p.skipComment()
			continue
		}
		line := p.line
		p.cmdStart = p.pos
		start := p.pos
		for p.pos < len(p.data) && !isSpace(p.data[p.pos]) && p.data[p.pos] != '\n' && p.data[p.pos] != ';' {
			p.pos++
		}
		var err error
		// uci file.c uci_parse_line: each command may be abbreviated to
		// its first letter.
		switch word := string(p.data[start:p.pos]); word {
		case "config", "c":
			err = p.config(line)
		case "option", "o":
			err = p.option(line, false)
		case "list", "l":
			err = p.option(line, true)
		case "package", "p":
			err = p.pkg(line)
		default:
			err = p.errorf(line, "invalid command %q", word)
		}
		if err != nil {
			return err
		}
	}
}

func (p *parser) pkg(line int) error {
	name, err := p.arg()
	if err != nil {
		return err
	}
	if name == "" {
		return p.errorf(line, "package without name")
	}
	if !validPackage(name) {
		return p.errorf(line, "invalid character in package name %q", name)
	}
	if err := p.eol(line); err != nil {
		return err
	}
	if p.f.Package != "" && p.f.Package != name {
		return p.errorf(line, "second package %q in one file (have %q)", name, p.f.Package)
	}
	p.f.Package = name
	return nil
}

func (p *parser) config(line int) error {
	typ, err := p.arg()
	if err != nil {
		return err
	}
	if typ == "" {
		return p.errorf(line, "config without type")
	}
	if !validType(typ) {
		return p.errorf(line, "invalid character in section type %q", typ)
	}
	name, err := p.arg()
	if err != nil {
		return err
	}
	if name != "" && !validName(name) {
		return p.errorf(line, "invalid character in section name %q (letters, digits and _ only)", name)
	}
	if err := p.eol(line); err != nil {
		return err
	}
	if name != "" {
		if s := p.named[name]; s != nil {
			if s.Type != typ {
				return p.errorf(line, "section %s of type %s redefined with type %s", name, s.Type, typ)
			}
			p.sec = s
			return nil
		}
	}
	if len(p.f.Sections) >= p.lim.MaxSections {
		return p.errorf(line, "more than %d sections", p.lim.MaxSections)
	}
	p.sec = &Section{Type: typ, Name: name, Line: line}
	p.f.Sections = append(p.f.Sections, p.sec)
	if name != "" {
		p.named[name] = p.sec
	}
	return nil
}

func (p *parser) option(line int, list bool) error {
	cmd := "option"
	if list {
		cmd = "list"
	}
	if p.sec == nil {
		return p.errorf(line, "%s outside a section", cmd)
	}
	name, err := p.arg()
	if err != nil {
		return err
	}
	if name == "" {
		return p.errorf(line, "%s without name", cmd)
	}
	if !validName(name) {
		return p.errorf(line, "invalid character in %s name %q (letters, digits and _ only)", cmd, name)
	}
	value, err := p.arg()
	if err != nil {
		return err
	}
	if err := p.eol(line); err != nil {
		return err
	}
	if p.values >= p.lim.MaxValues {
		return p.errorf(line, "more than %d values", p.lim.MaxValues)
	}
	p.values++
	if len(p.sec.Options) >= p.lim.MaxOptions && p.sec.Option(name) == nil {
		return p.errorf(line, "more than %d options in one section", p.lim.MaxOptions)
	}
	if list {
		p.sec.addList(name, value, line)
	} else {
		p.sec.set(name, value, line)
	}
	return nil
}

// eol checks that the command has no further argument (libuci's
// assert_eol in strict mode, uci's default).
func (p *parser) eol(line int) error {
	extra, err := p.arg()
	if err != nil {
		return err
	}
	if extra != "" {
		return p.errorf(line, "too many arguments (unexpected %q)", extra)
	}
	return nil
}

// arg reads the next argument of the current command; it returns "" at
// the end of the command. It follows uci file.c parse_str: quoted and
// unquoted parts join until a space, a ';', a comment or the end of the
// line.
func (p *parser) arg() (string, error) {
	p.skipSpace()
	p.buf = p.buf[:0]
	for p.pos < len(p.data) {
		if p.pos-p.cmdStart > p.lim.MaxCommand {
			return "", p.errorf(p.line, "command longer than %d bytes", p.lim.MaxCommand)
		}
		c := p.data[p.pos]
		switch {
		case c == '\n' || c == ';' || isSpace(c):
			return string(p.buf), nil
		case c == '#':
			p.skipComment()
			return string(p.buf), nil
		case c == '\'':
			if err := p.singleQuoted(); err != nil {
				return "", err
			}
		case c == '"':
			if err := p.doubleQuoted(); err != nil {
				return "", err
			}
		case c == '\\':
			p.backslash()
		default:
			p.buf = append(p.buf, c)
			p.pos++
		}
	}
	return string(p.buf), nil
}

// backslash handles a backslash outside single quotes (uci file.c
// parse_backslash): at the end of a line it joins the next line,
// otherwise the next character is taken as it is.
func (p *parser) backslash() {
	p.pos++
	switch {
	case p.pos >= len(p.data):
	case p.data[p.pos] == '\n':
		p.pos++
		p.line++
	case p.data[p.pos] == '\r' && p.pos+1 < len(p.data) && p.data[p.pos+1] == '\n':
		p.pos += 2
		p.line++
	default:
		p.buf = append(p.buf, p.data[p.pos])
		p.pos++
	}
}

func (p *parser) singleQuoted() error {
	open := p.line
	p.pos++
	for p.pos < len(p.data) {
		if p.pos-p.cmdStart > p.lim.MaxCommand {
			return p.errorf(p.line, "command longer than %d bytes", p.lim.MaxCommand)
		}
		c := p.data[p.pos]
		p.pos++
		switch c {
		case '\'':
			return nil
		case '\n':
			p.line++
		}
		p.buf = append(p.buf, c)
	}
	return p.errorf(open, "unterminated ' (end of file inside a quoted value)")
}

func (p *parser) doubleQuoted() error {
	open := p.line
	p.pos++
	for p.pos < len(p.data) {
		if p.pos-p.cmdStart > p.lim.MaxCommand {
			return p.errorf(p.line, "command longer than %d bytes", p.lim.MaxCommand)
		}
		switch c := p.data[p.pos]; c {
		case '"':
			p.pos++
			return nil
		case '\\':
			p.backslash()
		case '\n':
			p.line++
			fallthrough
		default:
			p.buf = append(p.buf, c)
			p.pos++
		}
	}
	return p.errorf(open, `unterminated " (end of file inside a quoted value)`)
}
