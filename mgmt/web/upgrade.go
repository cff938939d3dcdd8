package web

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
)

// Upgrader writes a signed firmware image (the firmware adapts
// mgmt/upgrade.Upgrader). Upgrade reads the image from r; it verifies
// everything before it writes anything.
type Upgrader interface {
	Upgrade(ctx context.Context, r io.Reader, keepConfig, testOnly bool) (version string, written bool, err error)
	Reboot() error
}

// maxUpgradeField bounds each form field before the image part.
const maxUpgradeField = 256

func (u *UI) upgradePage(w http.ResponseWriter, r *http.Request, s *session) {
	var p page
	u.start(&p, "Firmware upgrade", s)
	p.m(`<section><h2>Firmware upgrade</h2>`)
	if u.upgrader == nil {
		p.m(`<p>This board has no firmware flash to upgrade.</p></section>` + "\n")
		u.end(&p, false)
		send(w, http.StatusOK, &p)
		return
	}
	p.m(`<p>Upload a signed image made with <code>gowrt build -sign KEY</code> for this board. It is verified completely before anything is written; then the router writes it and reboots.</p>`)
	// The token comes first: the upload is read as a stream, and nothing
	// after an unauthenticated field is read.
	p.m(`<form method=post action="/system/upgrade" enctype="multipart/form-data">`)
	csrfInput(&p, s)
	p.m(`<label><input type=checkbox name=keep value=yes checked> Keep the configuration</label>`)
	p.m(`<label><input type=checkbox name=test value=yes> Verify only</label>`)
	p.m(`<label>Image <input type=file name=image required></label><button class=danger>Upgrade</button></form></section>` + "\n")
	u.end(&p, false)
	send(w, http.StatusOK, &p)
}

// upgradeUpload streams a multipart upload: the CSRF token field must come
// first (browsers send fields in form order), then the options, then the
// image, which goes to the Upgrader without being buffered here.
func (u *UI) upgradeUpload(w http.ResponseWriter, r *http.Request, s *session) {
	if u.upgrader == nil {
		http.Error(w, "this board has no firmware flash to upgrade", http.StatusNotImplemented)
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		http.Error(w, "upload the image as multipart/form-data", http.StatusBadRequest)
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		http.Error(w, "bad upload", http.StatusBadRequest)
		return
	}
	csrfOK, keep, test := false, false, false
	refuse := func() {
		u.log.Warn("web: upgrade without a valid CSRF token first refused", "src", source(r))
		http.Error(w, "invalid or missing CSRF token; reload the page", http.StatusForbidden)
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			http.Error(w, "the upload has no image", http.StatusBadRequest)
			return
		}
		name := part.FormName()
		if !csrfOK && name != csrfField {
			refuse()
			return
		}
		if name == "image" {
			u.upgradeRun(w, r, s, part, keep, test)
			return
		}
		v, err := io.ReadAll(io.LimitReader(part, maxUpgradeField+1))
		if err != nil || len(v) > maxUpgradeField {
			http.Error(w, "bad upload field", http.StatusBadRequest)
			return
		}
		switch name {
		case csrfField:
			if !s.csrfOK(string(v)) {
				refuse()
				return
			}
			csrfOK = true
		case "keep":
			keep = string(v) == "yes"
		case "test":
			test = string(v) == "yes"
		}
	}
}

func (u *UI) upgradeRun(w http.ResponseWriter, r *http.Request, s *session, img io.Reader, keep, test bool) {
	u.log.Warn("web: upgrade uploaded", "src", source(r), "keep_config", keep, "test", test)
	version, written, err := u.upgrader.Upgrade(r.Context(), img, keep, test)
	var p page
	if err != nil {
		u.start(&p, "Upgrade refused", s)
		p.m(`<section><h2>Upgrade refused</h2><p class=err>`)
		p.text(err.Error())
		p.m(`</p><p>Nothing was written unless the message says so.</p></section>` + "\n")
		u.end(&p, false)
		status := http.StatusBadRequest
		if errors.Is(err, context.Canceled) {
			status = http.StatusRequestTimeout
		}
		send(w, status, &p)
		return
	}
	if !written {
		u.start(&p, "Image verified", s)
		p.m(`<section><h2>Image verified</h2><p>Firmware `)
		p.text(version)
		p.m(` is signed, for this board and fits. Nothing was written.</p></section>` + "\n")
		u.end(&p, false)
		send(w, http.StatusOK, &p)
		return
	}
	u.start(&p, "Upgraded", s)
	p.m(`<section><h2>Upgraded</h2><p>Firmware `)
	p.text(version)
	p.m(` is written. The router is rebooting into it; reload this page in a minute.</p></section>` + "\n")
	u.end(&p, false)
	send(w, http.StatusOK, &p)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if err := u.upgrader.Reboot(); err != nil {
		u.log.Error("web: reboot after upgrade failed", "err", err)
	}
}
