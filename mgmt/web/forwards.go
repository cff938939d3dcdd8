package web

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// forwardProtos maps the form's protocol choice to the redirect's proto
// option (fw4 takes a list: 'tcp udp').
var forwardProtos = map[string]string{"tcp": "tcp", "udp": "udp", "tcp+udp": "tcp udp"}

// forwardFields are a port forward's form fields, in page order.
var forwardFields = []struct {
	name  string
	label markup
}{
	{"name", "Name"}, {"proto", "Protocol"}, {"src_dport", "External port"}, {"dest_ip", "Internal address"}, {"dest_port", "Internal port"},
}

func (u *UI) forwardsPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.renderForwards(w, http.StatusOK, s, map[string]string{"proto": "tcp"}, "", r.URL.Query().Get("saved") != "")
}

func (u *UI) renderForwards(w http.ResponseWriter, status int, s *session, in map[string]string, errMsg string, saved bool) {
	var p page
	u.start(&p, "Port forwards", s)
	p.m("<section class=wide><h2>Port forwards</h2><p>Connections to the WAN address on the external port go to a LAN host (firewall redirects from zone wan to lan, target DNAT).</p>\n")
	notice(&p, errMsg, saved)
	p.m("<table>\n<tr>")
	for _, f := range forwardFields {
		p.m("<th>" + f.label + "</th>")
	}
	p.m("<th></th></tr>\n")
	secs := u.store.Sections("firewall", "redirect")
	for _, sec := range secs {
		p.m("<tr>")
		for _, f := range forwardFields {
			p.m("<td>")
			p.text(strings.Join(sec.Options[f.name], " "))
			p.m("</td>")
		}
		p.m(`<td><form method=post action="/settings/forwards/delete">`)
		csrfInput(&p, s)
		p.m("<input type=hidden name=id")
		p.attr("value", sec.ID)
		p.m("><input type=hidden name=fp")
		p.attr("value", fingerprint(sec))
		p.m("><button class=danger>Delete</button></form></td></tr>\n")
	}
	if len(secs) == 0 {
		p.m("<tr><td colspan=6 class=muted>no port forwards</td></tr>\n")
	}
	p.m("</table></section>\n<section><h2>Add a port forward</h2><form method=post action=\"/settings/forwards/add\">")
	csrfInput(&p, s)
	for _, f := range forwardFields {
		p.m("<label")
		p.attr("for", "fw_"+f.name)
		p.m(">" + f.label + "</label>")
		if f.name == "proto" {
			p.m("<select id=fw_proto name=proto>")
			for _, c := range []string{"tcp", "udp", "tcp+udp"} {
				p.m("<option")
				p.attr("value", c)
				if in["proto"] == c {
					p.m(" selected")
				}
				p.m(">")
				p.text(c)
				p.m("</option>")
			}
			p.m("</select>\n")
			continue
		}
		p.m("<input")
		p.attr("id", "fw_"+f.name)
		p.attr("name", f.name)
		p.attr("value", in[f.name])
		p.m(">\n")
	}
	p.m("<small class=muted>Ports: a number or a range such as 8000-8010; an empty internal port keeps the external one.</small><br><button>Add</button></form></section>\n")
	u.end(&p, false)
	send(w, status, &p)
}

// fingerprint identifies a section's content: anonymous sections are
// addressed by index, which shifts when another one is deleted, so a
// delete names the content it saw as well.
func fingerprint(sec Section) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(sec.Options)) {
		h.Write([]byte(k))
		for _, v := range sec.Options[k] {
			var n [4]byte
			binary.BigEndian.PutUint32(n[:], uint32(len(v)))
			h.Write(n[:])
			h.Write([]byte(v))
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func (u *UI) forwardAdd(w http.ResponseWriter, r *http.Request, s *session) {
	in := map[string]string{}
	for _, f := range forwardFields {
		in[f.name] = strings.TrimSpace(r.PostForm.Get(f.name))
	}
	err := checkForward(in)
	if err == nil {
		err = u.commit(func() error {
			id, err := u.store.AddSection("firewall", "redirect")
			if err != nil {
				return err
			}
			dport := in["dest_port"]
			if dport == "" {
				dport = in["src_dport"]
			}
			for _, kv := range [][2]string{
				{"name", in["name"]}, {"src", "wan"}, {"dest", "lan"}, {"target", "DNAT"}, {"proto", forwardProtos[in["proto"]]},
				{"src_dport", in["src_dport"]}, {"dest_ip", in["dest_ip"]}, {"dest_port", dport},
			} {
				if err := u.store.Set("firewall."+id+"."+kv[0], kv[1]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		u.renderForwards(w, http.StatusUnprocessableEntity, s, in, err.Error(), false)
		return
	}
	u.log.Info("web: port forward added", "name", in["name"], "src", source(r))
	http.Redirect(w, r, "/settings/forwards?saved=1", http.StatusSeeOther)
}

func (u *UI) forwardDelete(w http.ResponseWriter, r *http.Request, s *session) {
	id, fp := r.PostForm.Get("id"), r.PostForm.Get("fp")
	found := false
	for _, sec := range u.store.Sections("firewall", "redirect") {
		if sec.ID == id && fingerprint(sec) == fp {
			found = true
			break
		}
	}
	err := errors.New("that port forward changed or no longer exists; nothing deleted")
	if found {
		err = u.commit(func() error { return u.store.DeleteSection("firewall", id) })
	}
	if err != nil {
		u.renderForwards(w, http.StatusUnprocessableEntity, s, map[string]string{"proto": "tcp"}, err.Error(), false)
		return
	}
	u.log.Info("web: port forward deleted", "id", id, "src", source(r))
	http.Redirect(w, r, "/settings/forwards?saved=1", http.StatusSeeOther)
}

// checkForward validates a new port forward.
func checkForward(in map[string]string) error {
	var errs []string
	if n := in["name"]; n == "" || len(n) > 64 || strings.ContainsFunc(n, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		errs = append(errs, "Name: 1 to 64 printable characters")
	}
	if _, ok := forwardProtos[in["proto"]]; !ok {
		errs = append(errs, "Protocol: tcp, udp or tcp+udp")
	}
	if err := checkPorts(in["src_dport"]); err != nil {
		errs = append(errs, "External port: "+err.Error())
	}
	if err := checkHostAddr(in["dest_ip"]); err != nil {
		errs = append(errs, "Internal address: "+err.Error())
	}
	if in["dest_port"] != "" {
		if err := checkPorts(in["dest_port"]); err != nil {
			errs = append(errs, "Internal port: "+err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// checkPorts accepts a port or a range "lo-hi" (fw4's port syntax).
func checkPorts(v string) error {
	lo, hi, isRange := strings.Cut(v, "-")
	a, err1 := strconv.ParseUint(lo, 10, 16)
	b, err2 := a, error(nil)
	if isRange {
		b, err2 = strconv.ParseUint(hi, 10, 16)
	}
	if err1 != nil || err2 != nil || a == 0 || b < a {
		return fmt.Errorf("%q is not a port (1-65535) or a range such as 8000-8010", v)
	}
	return nil
}

// sshKeyTypes are the public key algorithms OpenSSH's authorized_keys
// accepts (sshd(8) AUTHORIZED_KEYS FILE FORMAT).
var sshKeyTypes = []string{
	"ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
	"sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
}

// parseSSHKey checks an authorized_keys line without options ("type
// base64 [comment]"): the blob must decode and name the same type in its
// first string (RFC 4253 6.6). It returns the type, the comment and the
// OpenSSH SHA256 fingerprint.
func parseSSHKey(line string) (typ, comment, fp string, err error) {
	if strings.ContainsAny(line, "\r\n\x00") {
		return "", "", "", errors.New("one line only")
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return "", "", "", errors.New("expected \"type base64-key [comment]\"")
	}
	if !contains(sshKeyTypes, f[0]) {
		return "", "", "", fmt.Errorf("unknown key type %q", f[0])
	}
	blob, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		return "", "", "", errors.New("the key is not valid base64")
	}
	if len(blob) < 4 {
		return "", "", "", errors.New("the key is truncated")
	}
	n := binary.BigEndian.Uint32(blob)
	if uint64(n) > uint64(len(blob)-4) || string(blob[4:4+n]) != f[0] {
		return "", "", "", errors.New("the key's data does not match its type")
	}
	sum := sha256.Sum256(blob)
	return f[0], strings.Join(f[2:], " "), "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:]), nil
}
