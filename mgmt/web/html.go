package web

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// markup is trusted HTML: the page's own tags and attribute names. Only
// constants convert to it implicitly, so a value from the router, the
// configuration or a request (a string variable) cannot reach the page
// unescaped by accident: it has to go through text, attr or printf,
// which escape it. This replaces html/template, which would add about
// 3.7 MB of template engine and reflection to the firmware image.
type markup string

// page builds one HTML document.
type page struct {
	b strings.Builder
}

// m writes trusted markup (a constant).
func (p *page) m(s markup) { p.b.WriteString(string(s)) }

// text writes s escaped, as element content.
func (p *page) text(s string) { p.b.WriteString(html.EscapeString(s)) }

// attr writes ` name="value"` with value escaped; name is trusted.
func (p *page) attr(name markup, value string) {
	p.b.WriteByte(' ')
	p.b.WriteString(string(name))
	p.b.WriteString(`="`)
	p.b.WriteString(html.EscapeString(value))
	p.b.WriteByte('"')
}

// printf formats trusted markup with every argument escaped: each one is
// formatted with %v (or the verb's own rules for numbers) and the result
// escaped before it goes in.
func (p *page) printf(format markup, args ...any) {
	esc := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int, int64, uint64, uint32, uint16, uint8, float64, bool:
			esc[i] = v // numbers and booleans print no markup characters
		default:
			esc[i] = escaped(fmt.Sprint(v))
		}
	}
	fmt.Fprintf(&p.b, string(format), esc...)
}

// escaped is a value already escaped by printf; its String keeps it from
// being formatted again by a verb such as %q.
type escaped string

func (e escaped) String() string { return html.EscapeString(string(e)) }

// tagged writes <tag>text</tag>, text escaped.
func (p *page) tagged(open, close markup, text string) {
	p.m(open)
	p.text(text)
	p.m(close)
}

// num writes an unsigned number.
func (p *page) num(n uint64) { p.b.WriteString(strconv.FormatUint(n, 10)) }

func (p *page) String() string { return p.b.String() }
