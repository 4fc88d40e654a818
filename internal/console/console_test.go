package console_test

import (
	"bytes"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/console"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// get requests path of srv and returns the answer with its body read.
func get(t *testing.T, srv *httptest.Server, path string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestEveryResponseIsLockedDown: every answer under /ui/ (a page, a file, a missing file,
// the redirect) carries the Content-Security-Policy, nosniff and no-referrer headers; every
// page path is the shell; files have their types; a known version answers 304.
func TestEveryResponseIsLockedDown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(console.Handler())
	t.Cleanup(srv.Close)
	shell, err := os.ReadFile(filepath.Join("assets", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, contentType string
		status            int
		body              string // a part of it
	}{
		{"/ui/", "text/html; charset=utf-8", 200, string(shell)},
		{"/ui/search?q=weather", "text/html; charset=utf-8", 200, string(shell)},
		{"/ui/catalog/fin", "text/html; charset=utf-8", 200, string(shell)},
		{"/ui/tool/fin__get_price", "text/html; charset=utf-8", 200, string(shell)},
		{"/ui/no/such/page", "text/html; charset=utf-8", 200, string(shell)},
		{"/ui/assets/js/app.js", "text/javascript; charset=utf-8", 200, "import"},
		{"/ui/assets/console.css", "text/css; charset=utf-8", 200, ":root"},
		{"/ui/assets/nope.js", "application/json", 404, `"code":"not_found"`},
		{"/ui", "", http.StatusMovedPermanently, ""},
	} {
		resp, body := get(t, srv, tc.path, nil)
		h := resp.Header
		if resp.StatusCode != tc.status || h.Get("Content-Type") != tc.contentType && tc.contentType != "" || !strings.Contains(body, tc.body) {
			t.Errorf("GET %s: %d %q, body %.80q", tc.path, resp.StatusCode, h.Get("Content-Type"), body)
		}
		if h.Get("Content-Security-Policy") != console.ContentSecurityPolicy || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: security headers %v", tc.path, h)
		}
	}
	if resp, _ := get(t, srv, "/ui?q=x", nil); resp.Header.Get("Location") != "/ui/?q=x" {
		t.Errorf("redirect of /ui?q=x: %q", resp.Header.Get("Location"))
	}
	resp, _ := get(t, srv, "/ui/assets/js/app.js", nil)
	again, body := get(t, srv, "/ui/assets/js/app.js", http.Header{"If-None-Match": {resp.Header.Get("ETag")}})
	if resp.Header.Get("ETag") == "" || again.StatusCode != http.StatusNotModified || body != "" {
		t.Errorf("revalidation: ETag %q, then %d %q", resp.Header.Get("ETag"), again.StatusCode, body)
	}
	const want = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	if console.ContentSecurityPolicy != want {
		t.Errorf("policy %q, want %q", console.ContentSecurityPolicy, want)
	}
}

// TestShellIsPublicAndAPIIsNot: through toolgate's server with keys, the shell and its
// files are served without a key (they carry no data) and keep their headers, while the
// API still needs one; a page of another origin is refused the shell as everything else.
func TestShellIsPublicAndAPIIsNot(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(api.New(api.Deps{Pool: pgtest.NewPool(t), Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/ui/", "/ui/catalog", "/ui/assets/js/api.js"} {
		resp, _ := get(t, srv, path, nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") != console.ContentSecurityPolicy {
			t.Errorf("GET %s without a key: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	for _, path := range []string{"/v1/whoami", "/v1/tools", "/v1/sources"} {
		if resp, body := get(t, srv, path, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a key: %d %s", path, resp.StatusCode, body)
		}
	}
	// The server's own refusals of a console path carry the console's headers too.
	for _, tc := range []struct {
		path   string
		header http.Header
		status int
		code   string
	}{
		{"/ui/search", http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden, "cross_origin"},
		{"/ui/tool/%ff", nil, http.StatusBadRequest, "invalid_text"},
	} {
		resp, body := get(t, srv, tc.path, tc.header)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.code) || resp.Header.Get("Content-Security-Policy") != console.ContentSecurityPolicy {
			t.Errorf("GET %s %v: %d %v %s", tc.path, tc.header, resp.StatusCode, resp.Header, body)
		}
	}
	if resp, _ := get(t, srv, "/v1/whoami", nil); resp.Header.Get("Content-Security-Policy") != "" {
		t.Errorf("the API answers with the console's policy: %v", resp.Header)
	}
}

// TestShippedFilesRunNoInlineCode parses every shipped file: the HTML has no inline
// script, no event-handler or style attribute and no style element, and its scripts and
// styles come from the console's own files; the JavaScript never parses a string as HTML
// or code, nor sets a handler or a style through an attribute.
func TestShippedFilesRunNoInlineCode(t *testing.T) {
	t.Parallel()
	forbiddenJS := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|` +
		`setAttribute\(\s*['"](on|style)|\.style\b|javascript:|createContextualFragment|DOMParser|srcdoc`)
	var files int
	err := filepath.WalkDir("assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".html":
			checkHTML(t, path, body)
		case ".js":
			for i, line := range strings.Split(string(body), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "//") {
					continue
				}
				if m := forbiddenJS.FindString(line); m != "" {
					t.Errorf("%s:%d: %q: %s", path, i+1, m, strings.TrimSpace(line))
				}
			}
		case ".css":
			if bytes.Contains(body, []byte("expression(")) || bytes.Contains(body, []byte("@import")) {
				t.Errorf("%s: loads or runs something", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("checked %d files", files)
	}
}

func checkHTML(t *testing.T, path string, body []byte) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Errorf("%s: %v", path, z.Err())
			}
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		attrs := map[string]string{}
		for _, a := range tok.Attr {
			attrs[strings.ToLower(a.Key)] = a.Val
			if strings.HasPrefix(strings.ToLower(a.Key), "on") || strings.EqualFold(a.Key, "style") {
				t.Errorf("%s: <%s %s=...>: inline handler or style", path, tok.Data, a.Key)
			}
		}
		switch tok.Data {
		case "script":
			src, ok := attrs["src"]
			if !ok || !strings.HasPrefix(src, "/ui/assets/") {
				t.Errorf("%s: a script without a src of the console's own (%q)", path, src)
			}
			if z.Next() == html.TextToken && strings.TrimSpace(string(z.Text())) != "" {
				t.Errorf("%s: inline script text", path)
			}
		case "style":
			t.Errorf("%s: a style element", path)
		case "link":
			if href := attrs["href"]; attrs["rel"] == "stylesheet" && !strings.HasPrefix(href, "/ui/assets/") {
				t.Errorf("%s: a stylesheet from elsewhere: %q", path, href)
			}
		}
	}
}
