package cfg

import (
	"bytes"
	"strings"
	"testing"
)

func FuzzImport(f *testing.F) {
	c, _ := Open(nil, nil)
	var b bytes.Buffer
	c.Export(&b)
	f.Add(b.String())
	f.Add("package system\nconfig system\n\toption hostname 'x'\n")
	f.Add("package dhcp\nconfig host\n list mac '00:11:22:33:44:55'\n option ip 192.168.1.9\n")
	f.Add("package firewall\nconfig zone lan\n option name lan\n")
	f.Add("package network\nconfig interface wan\n option proto dhcp\n option dns '1.1.1.1 8.8.8.8'\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, _ := Open(nil, nil)
		if err := c.Import(strings.NewReader(text)); err != nil {
			return
		}
		if _, err := c.Commit(); err != nil {
			return
		}
		var a bytes.Buffer
		if err := c.Export(&a); err != nil {
			t.Fatalf("export of an accepted config: %v", err)
		}
		d, _ := Open(nil, nil)
		if err := d.Import(bytes.NewReader(a.Bytes())); err != nil {
			t.Fatalf("re-import: %v\n%s", err, a.String())
		}
		if _, err := d.Commit(); err != nil {
			t.Fatalf("re-commit: %v", err)
		}
		var b bytes.Buffer
		d.Export(&b)
		if a.String() != b.String() {
			t.Fatalf("re-export differs:\n%s\n---\n%s", a.String(), b.String())
		}
		for _, p := range pkgNames {
			if !c.committed[p].Equal(d.committed[p]) {
				t.Fatalf("package %s differs", p)
			}
		}
	})
}

func FuzzSet(f *testing.F) {
	for _, s := range [][2]string{{"dhcp.lan.start", "120"}, {"system.hostname", "a"}, {"dhcp.@host[-1].mac", "x"},
		{"network.guest", "interface"}, {"firewall.@rule[0].name", "x'y"}, {"system.authorized_keys", "ssh-rsa AAAA"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		c, _ := Open(nil, nil)
		c.AddSection("dhcp", "host")
		err := c.Set(key, value)
		if err != nil && key != "" && !strings.Contains(err.Error(), key) {
			t.Fatalf("error %q does not name key %q", err, key)
		}
		c.Get(key)
		c.GetList(key)
		c.AddList(key, value)
		c.DelList(key, value)
		if _, err := c.Commit(); err == nil {
			var b bytes.Buffer
			if err := c.Export(&b); err != nil {
				t.Fatalf("export after commit: %v", err)
			}
			d, _ := Open(nil, nil)
			if err := d.Import(&b); err != nil {
				t.Fatalf("re-import: %v", err)
			}
		}
		c.Unset(key)
	})
}
