// Package cfg is gowrt's typed configuration: OpenWrt-style UCI packages
// (network, dhcp, firewall, system, wireless, dropbear) read and written
// with config/uci, checked against a closed schema (schema.go) with
// OpenWrt's defaults (defaults.go), staged, committed as one blob through
// a Store, announced on the event bus and decoded into a Snapshot for the
// services.
//
// # Keys
//
// A key is pkg.section.option, where section is a name ("lan") or an
// anonymous section's position, "@host[0]" or "@host[-1]" for the last.
// A two-part key pkg.x names a section when x is a section reference that
// exists in pkg (or pkg has no section type called pkg: Set then creates
// a named section, as `uci set network.guest=interface` does); otherwise
// it is the option x of pkg's first section of type pkg, so
// system.hostname is system.@system[0].hostname and dropbear.Port is
// dropbear.@dropbear[0].Port.
//
// List options (network dns, ntp servers, dhcp host mac ...) are stored as
// UCI lists. Set on one replaces the list by the value's white-space
// separated fields, except for lists whose elements hold spaces
// (system.authorized_keys, dhcp_option, dnsmasq server): there the value
// is one element. Get joins a list's elements with a space.
//
// # Validation
//
// Set, AddList and Import check each value against its option's type at
// once; errors name the key: `dhcp.lan.start: "300": out of range 1..254`.
// Commit checks the whole configuration (validate.go): the LAN is a static
// interface with an address; a static interface has ipaddr and netmask;
// each DHCP pool starts inside its interface's subnet and does not hold
// the router's own address (a pool running past the subnet's end is
// clamped to it, as OpenWrt's dnsmasq init script does, so start 120 with
// the default limit 150 works on a /24; Snapshot.DHCP.Limit is the clamped
// size); references between sections resolve; Wi-Fi keys fit their
// encryption; and net/firewall's Load accepts the firewall package.
//
// # Storage
//
// The committed configuration is one blob, the `uci export` text of every
// package with its `package` line, saved with Store.Save; the board's
// store (flash/confstore) makes the save atomic across power cuts. A
// commit with no package changed saves nothing. If the stored blob does
// not parse or validate, Open returns the defaults and an error saying
// so; the blob stays in the store untouched until a commit or a factory
// reset writes a new one, so the caller can still read it out (Store.Load)
// for repair. A stored blob that lacks a package (an older firmware) gets
// that package's defaults without an error.
package cfg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gowrt/gowrt/config/uci"
	"github.com/gowrt/gowrt/sys/event"
)

// Store keeps the committed configuration: Load returns nil, nil when
// nothing was saved yet. A confstore.Key satisfies it.
type Store interface {
	Load() ([]byte, error)
	Save([]byte) error
}

// ErrNotFound: the key names a section or option that is not there.
var ErrNotFound = errors.New("not found")

// Config is the configuration: the committed packages, a staged copy
// that Set and friends change, and the Snapshot of the committed one. All
// methods are safe for concurrent use.
type Config struct {
	mu        sync.Mutex
	st        Store
	bus       *event.Bus
	committed map[string]*uci.File
	staged    map[string]*uci.File
	changes   []string
	snap      *Snapshot
	seq       uint64
}

// Open loads the committed configuration from st (nil: RAM only, starting
// from the defaults). On a stored configuration that cannot be read,
// parsed or validated, it returns a usable Config holding the defaults
// and an error saying what was wrong; the stored blob is not overwritten
// until the next Commit or FactoryReset.
func Open(st Store, bus *event.Bus) (*Config, error) {
	c := &Config{st: st, bus: bus}
	files := defaults()
	var openErr error
	if st != nil {
		blob, err := st.Load()
		switch {
		case err != nil:
			openErr = fmt.Errorf("cfg: stored configuration unreadable, using defaults: %w", err)
		case blob != nil:
			got, err := parseBlob(blob)
			if err == nil {
				for p, f := range got {
					files[p] = f
				}
				err = validate(files)
			}
			if err != nil {
				files = defaults()
				openErr = fmt.Errorf("cfg: stored configuration invalid, using defaults (it is kept until the next commit): %w", err)
			}
		}
	}
	c.committed = files
	c.staged = cloneAll(files)
	c.snap = decode(files)
	return c, openErr
}

// parseBlob reads `uci export` text of several packages, each opened by a
// `package` line, checking every value against the schema.
func parseBlob(b []byte) (map[string]*uci.File, error) {
	chunks, err := splitPackages(b)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*uci.File, len(chunks))
	for _, ch := range chunks {
		f, err := uci.Parse("import", bytes.NewReader(ch))
		if err != nil {
			return nil, err
		}
		p := f.Package
		if _, ok := schema[p]; !ok {
			return nil, fmt.Errorf("%s: unknown package", p)
		}
		if _, dup := out[p]; dup {
			return nil, fmt.Errorf("%s: package given twice", p)
		}
		f.Name = p
		normalize(p, f)
		if err := checkFile(p, f); err != nil {
			return nil, err
		}
		out[p] = f
	}
	return out, nil
}

// splitPackages cuts text at the lines whose first word is `package` (or
// its abbreviation `p`). Values cannot hold line breaks (the schema
// refuses control characters), so such a line is always a command.
func splitPackages(b []byte) ([][]byte, error) {
	var out [][]byte
	start := -1
	off := 0
	for off < len(b) {
		end := bytes.IndexByte(b[off:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += off + 1
		}
		line := bytes.TrimLeft(b[off:end], " \t")
		if w := firstWord(line); w == "package" || w == "p" {
			if start >= 0 {
				out = append(out, b[start:off])
			}
			start = off
		} else if start < 0 {
			if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
				return nil, fmt.Errorf("import: line %q before the first `package` line", truncate(string(t)))
			}
		}
		off = end
	}
	if start < 0 {
		return nil, fmt.Errorf("import: no `package` line")
	}
	return append(out, b[start:]), nil
}

func firstWord(line []byte) string {
	i := bytes.IndexAny(line, " \t;\r\n")
	if i < 0 {
		i = len(line)
	}
	return string(line[:i])
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// normalize stores the schema's list options as lists, so an exported
// configuration has one form (OpenWrt also accepts `option dns 'a b'`).
func normalize(pkg string, f *uci.File) {
	for _, s := range f.Sections {
		ss := schema[pkg][s.Type]
		for i := range s.Options {
			o := &s.Options[i]
			t, ok := ss[o.Name]
			if !ok || !t.list || o.List {
				continue
			}
			if t.split {
				o.Values = strings.Fields(o.Values[0])
			}
			o.List = true
		}
	}
}

// checkFile checks every section type, option name and value of a package.
func checkFile(pkg string, f *uci.File) error {
	var errs []error
	for _, s := range f.Sections {
		ref := pkg + "." + f.Ref(s)
		ss, ok := schema[pkg][s.Type]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: unknown section type %q", ref, s.Type))
			continue
		}
		for _, o := range s.Options {
			t, ok := ss[o.Name]
			if !ok {
				errs = append(errs, fmt.Errorf("%s.%s: unknown option", ref, o.Name))
				continue
			}
			if o.List && !t.list && !t.any {
				errs = append(errs, fmt.Errorf("%s.%s: is an option, not a list", ref, o.Name))
				continue
			}
			for _, v := range o.Values {
				if err := t.check(v); err != nil {
					errs = append(errs, fmt.Errorf("%s.%s: %q: %v", ref, o.Name, truncate(v), err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func clone(f *uci.File) *uci.File {
	g := &uci.File{Name: f.Name, Package: f.Package, Sections: make([]*uci.Section, len(f.Sections))}
	for i, s := range f.Sections {
		t := &uci.Section{Type: s.Type, Name: s.Name, Line: s.Line, Options: make([]uci.Option, len(s.Options))}
		for j, o := range s.Options {
			o.Values = slices.Clone(o.Values)
			t.Options[j] = o
		}
		g.Sections[i] = t
	}
	return g
}

func cloneAll(m map[string]*uci.File) map[string]*uci.File {
	out := make(map[string]*uci.File, len(m))
	for p, f := range m {
		out[p] = clone(f)
	}
	return out
}

// key is a parsed key: the package, the section (nil if it does not
// exist), its reference as written, and the option ("" for the section).
type key struct {
	text    string
	pkg     string
	file    *uci.File
	sec     *uci.Section
	secRef  string
	option  string
	opt     optType
	hasType bool // opt is valid (option known for the section's type)
}

// resolve parses a key against the staged configuration. It fails on an
// unknown package, and on an unknown option of an existing section.
func (c *Config) resolve(text string) (*key, error) {
	parts := strings.Split(text, ".")
	k := &key{text: text}
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("%s: key must be pkg.section.option or pkg.option", text)
	}
	k.pkg = parts[0]
	f, ok := c.staged[k.pkg]
	if !ok {
		return nil, fmt.Errorf("%s: unknown package %q", text, k.pkg)
	}
	k.file = f
	if len(parts) == 3 {
		k.secRef, k.option = parts[1], parts[2]
	} else if _, pkgType := schema[k.pkg][k.pkg]; pkgType && f.Section(parts[1]) == nil && !strings.HasPrefix(parts[1], "@") {
		k.secRef, k.option = "@"+k.pkg+"[0]", parts[1]
	} else {
		k.secRef = parts[1]
	}
	if k.secRef == "" || (len(parts) == 3 && k.option == "") {
		return nil, fmt.Errorf("%s: empty part in key", text)
	}
	k.sec = f.Section(k.secRef)
	if k.option != "" && k.sec != nil {
		t, ok := schema[k.pkg][k.sec.Type][k.option]
		if !ok {
			return nil, fmt.Errorf("%s: unknown option %q for section type %s", text, k.option, k.sec.Type)
		}
		k.opt, k.hasType = t, true
	}
	return k, nil
}

// needOption resolves a key that must name an option of an existing section.
func (c *Config) needOption(text string) (*key, error) {
	k, err := c.resolve(text)
	if err != nil {
		return nil, err
	}
	if k.option == "" {
		return nil, fmt.Errorf("%s: names a section, not an option", text)
	}
	if k.sec == nil {
		return nil, fmt.Errorf("%s: section %s: %w", text, k.secRef, ErrNotFound)
	}
	return k, nil
}

// Get returns an option's staged value (a list's elements joined by
// spaces), or for a key naming a section, the section's type.
func (c *Config) Get(key string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := c.resolve(key)
	if err != nil {
		return "", err
	}
	if k.sec == nil {
		return "", fmt.Errorf("%s: section %s: %w", key, k.secRef, ErrNotFound)
	}
	if k.option == "" {
		return k.sec.Type, nil
	}
	v, ok := k.sec.Get(k.option)
	if !ok {
		return "", fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return v, nil
}

// GetList returns an option's staged values (one for a plain option).
func (c *Config) GetList(key string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := c.needOption(key)
	if err != nil {
		return nil, err
	}
	l := k.sec.List(k.option)
	if l == nil {
		return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return slices.Clone(l), nil
}

// Set stages a value. An empty value unsets the option. For a two-part
// key naming a section that does not exist, it creates a named section
// of type value (`cfg set network.guest=interface`).
func (c *Config) Set(key, value string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := c.resolve(key)
	if err != nil {
		return err
	}
	if k.option == "" {
		return c.setSection(k, value)
	}
	if k.sec == nil {
		return fmt.Errorf("%s: section %s: %w", key, k.secRef, ErrNotFound)
	}
	if value == "" {
		if k.sec.Delete(k.option) {
			c.changes = append(c.changes, "-"+key)
		}
		return nil
	}
	vals := []string{value}
	if k.opt.list && k.opt.split {
		vals = strings.Fields(value)
	}
	for _, v := range vals {
		if err := k.opt.check(v); err != nil {
			return fmt.Errorf("%s: %q: %v", key, truncate(v), err)
		}
	}
	if k.opt.list {
		k.sec.Delete(k.option)
		k.sec.Options = append(k.sec.Options, uci.Option{Name: k.option, Values: vals, List: true})
	} else if err := k.sec.Set(k.option, value); err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	c.changes = append(c.changes, key+"="+quote(value))
	return nil
}

func (c *Config) setSection(k *key, typ string) error {
	if _, ok := schema[k.pkg][typ]; !ok {
		return fmt.Errorf("%s: unknown section type %q in package %s", k.text, typ, k.pkg)
	}
	if k.sec != nil {
		if k.sec.Type != typ {
			return fmt.Errorf("%s: section has type %s, not %s", k.text, k.sec.Type, typ)
		}
		return nil
	}
	if strings.HasPrefix(k.secRef, "@") {
		return fmt.Errorf("%s: section %s: %w", k.text, k.secRef, ErrNotFound)
	}
	if _, err := k.file.Add(typ, k.secRef); err != nil {
		return fmt.Errorf("%s: %v", k.text, err)
	}
	c.changes = append(c.changes, k.text+"="+typ)
	return nil
}

func quote(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }

// AddList appends a value to a list option.
func (c *Config) AddList(key, value string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := c.needOption(key)
	if err != nil {
		return err
	}
	if !k.opt.list && !k.opt.any {
		return fmt.Errorf("%s: not a list option", key)
	}
	if err := k.opt.check(value); err != nil {
		return fmt.Errorf("%s: %q: %v", key, truncate(value), err)
	}
	if err := k.sec.AddList(k.option, value); err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	c.changes = append(c.changes, key+"+="+quote(value))
	return nil
}

// DelList removes every element equal to value from a list option.
func (c *Config) DelList(key, value string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := c.needOption(key)
	if err != nil {
		return err
	}
	o := k.sec.Option(k.option)
	if o == nil || !slices.Contains(o.Values, value) {
		return fmt.Errorf("%s: value %q: %w", key, truncate(value), ErrNotFound)
	}
	o.Values = slices.DeleteFunc(o.Values, func(v string) bool { return v == value })
	if len(o.Values) == 0 {
		k.sec.Delete(k.option)
	}
	c.changes = append(c.changes, key+"-="+quote(value))
	return nil
}

// Unset removes an option, or a whole section when the key names one.
func (c *Config) Unset(key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := c.resolve(key)
	if err != nil {
		return err
	}
	if k.sec == nil {
		return fmt.Errorf("%s: section %s: %w", key, k.secRef, ErrNotFound)
	}
	if k.option == "" {
		k.file.Remove(k.sec)
	} else if !k.sec.Delete(k.option) {
		return fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	c.changes = append(c.changes, "-"+key)
	return nil
}

// AddSection stages a new anonymous section and returns its reference,
// "@redirect[2]". References count sections of the type in order, so
// deleting an earlier one renumbers the later ones (as in UCI).
func (c *Config) AddSection(pkg, typ string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.staged[pkg]
	if !ok {
		return "", fmt.Errorf("%s: unknown package", pkg)
	}
	if _, ok := schema[pkg][typ]; !ok {
		return "", fmt.Errorf("%s: unknown section type %q", pkg, typ)
	}
	s, err := f.Add(typ, "")
	if err != nil {
		return "", fmt.Errorf("%s: %v", pkg, err)
	}
	id := f.Ref(s)
	c.changes = append(c.changes, pkg+"."+id+"="+typ)
	return id, nil
}

// DeleteSection stages the removal of a section (name or @type[i]).
func (c *Config) DeleteSection(pkg, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.staged[pkg]
	if !ok {
		return fmt.Errorf("%s: unknown package", pkg)
	}
	s := f.Section(id)
	if s == nil {
		return fmt.Errorf("%s.%s: section %w", pkg, id, ErrNotFound)
	}
	f.Remove(s)
	c.changes = append(c.changes, "-"+pkg+"."+id)
	return nil
}

// Section is one section of the staged configuration.
type Section struct {
	ID, Type string
	Options  map[string][]string
}

// Sections lists pkg's staged sections of type typ ("" = all), in order.
func (c *Config) Sections(pkg, typ string) []Section {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.staged[pkg]
	if !ok {
		return nil
	}
	var out []Section
	for _, s := range f.Sections {
		if typ != "" && s.Type != typ {
			continue
		}
		sec := Section{ID: f.Ref(s), Type: s.Type, Options: make(map[string][]string, len(s.Options))}
		for _, o := range s.Options {
			sec.Options[o.Name] = slices.Clone(o.Values)
		}
		out = append(out, sec)
	}
	return out
}

// Changes lists the staged changes in order, `uci changes` style:
// pkg.sec.opt='v', -pkg.sec.opt, pkg.sec.opt+='v', pkg.@type[i]=type.
func (c *Config) Changes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.changes)
}

// Revert drops every staged change.
func (c *Config) Revert() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.staged = cloneAll(c.committed)
	c.changes = nil
}

// Commit validates the staged configuration as a whole, saves it to the
// store, makes it the committed one, publishes event.ConfigCommitted and
// returns the packages whose content changed (sorted). With no package
// changed it saves and publishes nothing and returns nil. On an error
// nothing is committed and the staged changes stay.
func (c *Config) Commit() ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commit(false)
}

func (c *Config) commit(force bool) ([]string, error) {
	for _, p := range pkgNames {
		if err := checkFile(p, c.staged[p]); err != nil {
			return nil, err
		}
	}
	if err := validate(c.staged); err != nil {
		return nil, err
	}
	var changed []string
	for _, p := range pkgNames {
		if !c.staged[p].Equal(c.committed[p]) {
			changed = append(changed, p)
		}
	}
	if len(changed) == 0 && !force {
		c.changes = nil
		return nil, nil
	}
	blob, err := exportText(c.staged, pkgNames)
	if err != nil {
		return nil, err
	}
	if c.st != nil {
		if err := c.st.Save(blob); err != nil {
			return nil, fmt.Errorf("cfg: save: %w", err)
		}
	}
	c.committed = c.staged
	c.staged = cloneAll(c.committed)
	c.changes = nil
	c.snap = decode(c.committed)
	if len(changed) == 0 {
		return nil, nil
	}
	c.seq++
	if c.bus != nil {
		c.bus.Config.Publish(event.ConfigCommitted{Seq: c.seq, Packages: slices.Clone(changed)})
	}
	return changed, nil
}

// FactoryReset replaces the whole configuration by the defaults (staged
// changes are dropped) and commits it. It always saves, so it also
// replaces a stored configuration Open could not read.
func (c *Config) FactoryReset() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.staged = defaults()
	_, err := c.commit(true)
	if err != nil {
		c.staged = cloneAll(c.committed)
	}
	return err
}

func exportText(files map[string]*uci.File, pkgs []string) ([]byte, error) {
	var b bytes.Buffer
	for i, p := range pkgs {
		if i > 0 {
			b.WriteByte('\n')
		}
		f := files[p]
		f.Package = p
		if _, err := f.WriteTo(&b); err != nil {
			return nil, fmt.Errorf("cfg: export %s: %w", p, err)
		}
	}
	return b.Bytes(), nil
}

// Export writes the committed packages (all when none are named) as
// `uci export` text, each with its `package` line.
func (c *Config) Export(w io.Writer, pkgs ...string) error {
	c.mu.Lock()
	if len(pkgs) == 0 {
		pkgs = pkgNames
	}
	for _, p := range pkgs {
		if _, ok := c.committed[p]; !ok {
			c.mu.Unlock()
			return fmt.Errorf("%s: unknown package", p)
		}
	}
	b, err := exportText(c.committed, pkgs)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Import reads `uci export` text of one or more packages (each opened by
// a `package` line) and stages them, each replacing the whole staged
// package. Every value is checked; on any error nothing is staged.
func (c *Config) Import(r io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(r, int64(uci.DefaultLimits.MaxBytes)+1))
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if len(b) > uci.DefaultLimits.MaxBytes {
		return fmt.Errorf("import: more than %d bytes", uci.DefaultLimits.MaxBytes)
	}
	files, err := parseBlob(b)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(files))
	for p, f := range files {
		c.staged[p] = f
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		c.changes = append(c.changes, "import "+p)
	}
	return nil
}

// Snapshot returns the committed configuration, decoded. It is shared
// and must not be modified; every commit makes a new one.
func (c *Config) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}
