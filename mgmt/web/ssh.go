package web

import (
	"errors"
	"net/http"
	"strings"
)

// sshKeysKey is the list of keys allowed to log in over SSH.
const sshKeysKey = "system.authorized_keys"

func (u *UI) sshPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.renderSSH(w, http.StatusOK, s, "", "", r.URL.Query().Get("saved") != "")
}

func (u *UI) renderSSH(w http.ResponseWriter, status int, s *session, input, errMsg string, saved bool) {
	var p page
	u.start(&p, "SSH keys", s)
	p.m("<section class=wide><h2>SSH keys</h2><p>Public keys that may log in as root over SSH from the LAN.</p>\n")
	keys, err := u.store.GetList(sshKeysKey)
	if err != nil && errMsg == "" {
		errMsg = err.Error()
	}
	notice(&p, errMsg, saved)
	p.m("<table>\n<tr><th>Type</th><th>Comment</th><th>Fingerprint</th><th></th></tr>\n")
	for _, k := range keys {
		typ, comment, fp, err := parseSSHKey(k)
		if err != nil {
			typ, fp = "invalid", err.Error()
		}
		p.m("<tr><td>")
		p.text(typ)
		p.m("</td><td>")
		p.text(comment)
		p.m("</td><td><code>")
		p.text(fp)
		p.m(`</code></td><td><form method=post action="/settings/ssh/delete">`)
		csrfInput(&p, s)
		p.m("<input type=hidden name=key")
		p.attr("value", k)
		p.m("><button class=danger>Delete</button></form></td></tr>\n")
	}
	if len(keys) == 0 {
		p.m("<tr><td colspan=4 class=muted>no keys</td></tr>\n")
	}
	p.m(`</table></section>
<section class=wide><h2>Add a key</h2><form method=post action="/settings/ssh/add">`)
	csrfInput(&p, s)
	p.m(`<label for=key>Public key (one line of authorized_keys, e.g. the content of ~/.ssh/id_ed25519.pub)</label><textarea id=key name=key>`)
	p.text(input)
	p.m("</textarea><button>Add</button></form></section>\n")
	u.end(&p, false)
	send(w, status, &p)
}

func (u *UI) sshAdd(w http.ResponseWriter, r *http.Request, s *session) {
	line := strings.TrimSpace(r.PostForm.Get("key"))
	_, _, _, err := parseSSHKey(line)
	if err == nil {
		keys, _ := u.store.GetList(sshKeysKey)
		if contains(keys, line) {
			err = errors.New("that key is already there")
		}
	}
	if err == nil {
		err = u.commit(func() error { return u.store.AddList(sshKeysKey, line) })
	}
	if err != nil {
		u.renderSSH(w, http.StatusUnprocessableEntity, s, line, "Key not added: "+err.Error(), false)
		return
	}
	u.log.Info("web: SSH key added", "src", source(r))
	http.Redirect(w, r, "/settings/ssh?saved=1", http.StatusSeeOther)
}

func (u *UI) sshDelete(w http.ResponseWriter, r *http.Request, s *session) {
	line := r.PostForm.Get("key")
	keys, err := u.store.GetList(sshKeysKey)
	if err == nil && !contains(keys, line) {
		err = errors.New("no such key")
	}
	if err == nil {
		err = u.commit(func() error { return u.store.DelList(sshKeysKey, line) })
	}
	if err != nil {
		u.renderSSH(w, http.StatusUnprocessableEntity, s, "", "Key not deleted: "+err.Error(), false)
		return
	}
	u.log.Info("web: SSH key deleted", "src", source(r))
	http.Redirect(w, r, "/settings/ssh?saved=1", http.StatusSeeOther)
}

func (u *UI) rebootPage(w http.ResponseWriter, r *http.Request, s *session) {
	var p page
	u.start(&p, "Reboot", s)
	p.m(`<section><h2>Reboot</h2><p>Restart the router now? Connections through it stop for the time it takes to boot.</p><form method=post action="/reboot">`)
	csrfInput(&p, s)
	p.m(`<input type=hidden name=confirm value=yes><button class=danger>Reboot now</button></form></section>` + "\n")
	u.end(&p, false)
	send(w, http.StatusOK, &p)
}

// rebootNow answers first, then calls Reboot (which should return at
// once and restart shortly after, so the answer reaches the browser).
func (u *UI) rebootNow(w http.ResponseWriter, r *http.Request, s *session) {
	if r.PostForm.Get("confirm") != "yes" {
		http.Error(w, "reboot not confirmed", http.StatusBadRequest)
		return
	}
	if u.reboot == nil {
		http.Error(w, "reboot is not available on this system", http.StatusNotImplemented)
		return
	}
	var p page
	u.start(&p, "Rebooting", s)
	p.m("<section><h2>Rebooting</h2><p>The router is restarting. Reload this page in a minute.</p></section>\n")
	u.end(&p, false)
	send(w, http.StatusOK, &p)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	u.log.Warn("web: reboot requested", "src", source(r))
	if err := u.reboot(); err != nil {
		u.log.Error("web: reboot failed", "err", err)
	}
}
