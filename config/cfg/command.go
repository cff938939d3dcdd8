package cfg

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

const usage = `usage: cfg get KEY | set KEY=VALUE | set KEY VALUE | unset KEY | add_list KEY=VALUE |
       del_list KEY=VALUE | add PKG TYPE | delete PKG SECTION | show [PKG] | changes |
       commit | revert | export [PKG...] | import | reset`

// Command is the shell's `cfg` command. in is read by `cfg import`.
func (c *Config) Command(in io.Reader, w io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd, rest := args[0], args[1:]
	// keyValue takes KEY=VALUE or KEY VALUE... (the rest joined by spaces,
	// so an unquoted SSH key line still arrives whole).
	keyValue := func() (string, string, error) {
		if len(rest) == 0 {
			return "", "", fmt.Errorf("cfg %s: missing KEY=VALUE", cmd)
		}
		if len(rest) == 1 {
			k, v, ok := strings.Cut(rest[0], "=")
			if !ok {
				return "", "", fmt.Errorf("cfg %s: %q: missing '=VALUE'", cmd, rest[0])
			}
			return k, v, nil
		}
		return rest[0], strings.Join(rest[1:], " "), nil
	}
	oneKey := func() (string, error) {
		if len(rest) != 1 {
			return "", fmt.Errorf("cfg %s: need exactly one KEY", cmd)
		}
		return rest[0], nil
	}
	switch cmd {
	case "get":
		k, err := oneKey()
		if err != nil {
			return err
		}
		v, err := c.Get(k)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, v)
	case "set", "add_list", "del_list":
		k, v, err := keyValue()
		if err != nil {
			return err
		}
		switch cmd {
		case "set":
			return c.Set(k, v)
		case "add_list":
			return c.AddList(k, v)
		default:
			return c.DelList(k, v)
		}
	case "unset", "delete":
		if cmd == "delete" && len(rest) == 2 {
			return c.DeleteSection(rest[0], rest[1])
		}
		k, err := oneKey()
		if err != nil {
			return err
		}
		return c.Unset(k)
	case "add":
		if len(rest) != 2 {
			return errors.New("cfg add: need PKG TYPE")
		}
		id, err := c.AddSection(rest[0], rest[1])
		if err != nil {
			return err
		}
		fmt.Fprintln(w, id)
	case "show":
		pkgs := rest
		if len(pkgs) == 0 {
			pkgs = pkgNames
		}
		for _, p := range pkgs {
			secs := c.Sections(p, "")
			if secs == nil {
				if _, ok := schema[p]; !ok {
					return fmt.Errorf("%s: unknown package", p)
				}
			}
			for _, s := range secs {
				fmt.Fprintf(w, "%s.%s=%s\n", p, s.ID, s.Type)
				for _, o := range c.optionOrder(p, s.ID) {
					vals := s.Options[o]
					q := make([]string, len(vals))
					for i, v := range vals {
						q[i] = quote(v)
					}
					fmt.Fprintf(w, "%s.%s.%s=%s\n", p, s.ID, o, strings.Join(q, " "))
				}
			}
		}
	case "changes":
		for _, l := range c.Changes() {
			fmt.Fprintln(w, l)
		}
	case "commit":
		changed, err := c.Commit()
		if err != nil {
			return err
		}
		if len(changed) == 0 {
			fmt.Fprintln(w, "no changes")
			return nil
		}
		fmt.Fprintln(w, "committed:", strings.Join(changed, " "))
	case "revert":
		c.Revert()
	case "export":
		return c.Export(w, rest...)
	case "import":
		if in == nil {
			return errors.New("cfg import: no input")
		}
		return c.Import(in)
	case "reset":
		if err := c.FactoryReset(); err != nil {
			return err
		}
		fmt.Fprintln(w, "factory defaults restored")
	default:
		return fmt.Errorf("cfg: unknown command %q\n%s", cmd, usage)
	}
	return nil
}

// optionOrder returns a staged section's option names in file order.
func (c *Config) optionOrder(pkg, id string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.staged[pkg].Section(id)
	if s == nil {
		return nil
	}
	out := make([]string, len(s.Options))
	for i, o := range s.Options {
		out[i] = o.Name
	}
	return out
}
