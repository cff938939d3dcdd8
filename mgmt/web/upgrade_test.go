package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeUpgrader records what the UI handed it.
type fakeUpgrader struct {
	mu         sync.Mutex
	calls      int
	image      []byte
	keep, test bool
	err        error
	reboots    int
}

func (f *fakeUpgrader) Upgrade(ctx context.Context, r io.Reader, keep, test bool) (string, bool, error) {
	b, err := io.ReadAll(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.image, f.keep, f.test = b, keep, test
	if err != nil {
		return "", false, err
	}
	if f.err != nil {
		return "", false, f.err
	}
	return "v2.0", !test, nil
}

func (f *fakeUpgrader) Reboot() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reboots++
	return nil
}

type part struct{ name, value string }

// upload posts a multipart form with the fields in the given order.
func (h *harness) upload(cookie string, fields ...part) *httptest.ResponseRecorder {
	h.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range fields {
		var w io.Writer
		var err error
		if f.name == "image" {
			w, err = mw.CreateFormFile("image", "gowrt.gowrtupg")
		} else {
			w, err = mw.CreateFormField(f.name)
		}
		if err != nil {
			h.t.Fatal(err)
		}
		io.WriteString(w, f.value)
	}
	mw.Close()
	hr := httptest.NewRequest("POST", "http://192.168.1.1/system/upgrade", &body)
	hr.RemoteAddr = "192.168.1.100:40000"
	hr.Header.Set("Content-Type", mw.FormDataContentType())
	if cookie != "" {
		hr.AddCookie(&http.Cookie{Name: cookieName, Value: cookie})
	}
	w := httptest.NewRecorder()
	h.ui.ServeHTTP(w, hr)
	return w
}

// TestUpgradeUpload: a logged-in upload with the token first reaches the
// upgrader with the image and options, and a written image reboots.
func TestUpgradeUpload(t *testing.T) {
	h := newHarness(t)
	up := &fakeUpgrader{}
	h.ui.upgrader = up
	cookie, csrf := h.login()
	page := h.do(req{method: "GET", path: "/system/upgrade", cookie: cookie})
	if page.Code != 200 || !strings.Contains(page.Body.String(), `enctype="multipart/form-data"`) {
		t.Fatalf("upgrade page: %d\n%s", page.Code, page.Body)
	}
	image := strings.Repeat("firmware", 5000)
	w := h.upload(cookie, part{csrfField, csrf}, part{"keep", "yes"}, part{"image", image})
	if w.Code != 200 || !strings.Contains(w.Body.String(), "v2.0") {
		t.Fatalf("upload: %d\n%s", w.Code, w.Body)
	}
	if up.calls != 1 || string(up.image) != image || !up.keep || up.test || up.reboots != 1 {
		t.Fatalf("upgrader got calls=%d image=%d bytes keep=%v test=%v reboots=%d", up.calls, len(up.image), up.keep, up.test, up.reboots)
	}
	w = h.upload(cookie, part{csrfField, csrf}, part{"test", "yes"}, part{"image", image})
	if w.Code != 200 || !strings.Contains(w.Body.String(), "Nothing was written") || up.keep || !up.test || up.reboots != 1 {
		t.Fatalf("test upload: %d keep=%v test=%v reboots=%d\n%s", w.Code, up.keep, up.test, up.reboots, w.Body)
	}
	up.err = errors.New("sysupgrade: image is for board \"x\"")
	w = h.upload(cookie, part{csrfField, csrf}, part{"image", image})
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "image is for board") || up.reboots != 1 {
		t.Fatalf("refused upload: %d reboots=%d\n%s", w.Code, up.reboots, w.Body)
	}
}

// TestUpgradeRefusals: without a session, without the token, with the
// token after the image, with a wrong token, or with no image the upgrader
// is never called.
func TestUpgradeRefusals(t *testing.T) {
	h := newHarness(t)
	up := &fakeUpgrader{}
	h.ui.upgrader = up
	cookie, csrf := h.login()
	cases := []struct {
		name   string
		cookie string
		fields []part
		code   int
	}{
		{"no session", "", []part{{csrfField, csrf}, {"image", "x"}}, http.StatusUnauthorized},
		{"no token", cookie, []part{{"keep", "yes"}, {"image", "x"}}, http.StatusForbidden},
		{"token after image", cookie, []part{{"image", "x"}, {csrfField, csrf}}, http.StatusForbidden},
		{"wrong token", cookie, []part{{csrfField, strings.Repeat("0", 32)}, {"image", "x"}}, http.StatusForbidden},
		{"no image", cookie, []part{{csrfField, csrf}, {"keep", "yes"}}, http.StatusBadRequest},
		{"huge field", cookie, []part{{csrfField, csrf}, {"keep", strings.Repeat("y", 1000)}, {"image", "x"}}, http.StatusBadRequest},
	}
	for _, c := range cases {
		if w := h.upload(c.cookie, c.fields...); w.Code != c.code {
			t.Errorf("%s: status %d, want %d\n%s", c.name, w.Code, c.code, w.Body)
		}
	}
	w := h.do(req{method: "POST", path: "/system/upgrade", cookie: cookie, form: map[string][]string{csrfField: {csrf}}})
	if w.Code != http.StatusBadRequest {
		t.Errorf("urlencoded post: %d", w.Code)
	}
	if up.calls != 0 || up.reboots != 0 {
		t.Fatalf("upgrader called %d times, rebooted %d", up.calls, up.reboots)
	}
	h.ui.upgrader = nil
	if w := h.upload(cookie, part{csrfField, csrf}, part{"image", "x"}); w.Code != http.StatusNotImplemented {
		t.Fatalf("board without flash: %d", w.Code)
	}
}
