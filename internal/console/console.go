// Package console is toolgate's operator console: a few static files (HTML, CSS and
// JavaScript modules, embedded in the binary, no build step) that toolgate serves under
// /ui/. The files carry no data. The page reads everything from the JSON API, same-origin,
// with the key the operator pastes into it (docs/console.md).
//
// Every response under /ui/ has a strict Content-Security-Policy: scripts and styles from
// the files below only (no inline script, style or handler), connections to the same
// origin only, and no framing.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path the console is served under.
const Prefix = "/ui/"

// assetPrefix is the path of the console's files; every other path under Prefix is a
// page, answered with the shell.
const assetPrefix = Prefix + "assets/"

// ContentSecurityPolicy is the policy of every console response.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

//go:embed assets
var files embed.FS

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// contentTypes are the types of the files the console ships; a file of another extension
// is a mistake the handler's construction reports.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
}

// Handler serves the console: Prefix+"assets/<file>" the embedded files, every other path
// under Prefix the shell (index.html), whose script renders the page the path names, and
// Prefix without its slash a redirect to it.
func Handler() http.Handler {
	assets, err := load()
	if err != nil {
		// The files are compiled in: a failure here is a build mistake, caught by the tests.
		panic(err)
	}
	shell := assets["index.html"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		p := r.URL.Path
		switch {
		case p == strings.TrimSuffix(Prefix, "/"):
			target := Prefix
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			http.Redirect(w, r, target, http.StatusMovedPermanently)
		case strings.HasPrefix(p, assetPrefix):
			f, ok := assets[strings.TrimPrefix(p, assetPrefix)]
			if !ok {
				notFound(w, p)
				return
			}
			serve(w, r, f)
		default:
			serve(w, r, shell)
		}
	})
}

// SetHeaders sets the security headers of every console response: the policy, nosniff and
// no-referrer. A server that answers a console path itself (an error before the handler
// runs) sets them too.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// IsPath reports whether an URL path is the console's.
func IsPath(p string) bool {
	return p == strings.TrimSuffix(Prefix, "/") || strings.HasPrefix(p, Prefix)
}

// serve writes f, or 304 when the request already holds its version (If-None-Match).
func serve(w http.ResponseWriter, r *http.Request, f file) {
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("ETag", f.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}

// notFound answers a missing asset as the API answers what it does not know.
func notFound(w http.ResponseWriter, p string) {
	body, _ := json.Marshal(map[string]map[string]string{"error": {"code": "not_found",
		"message": fmt.Sprintf("the console has no file %s", p)}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	w.Write(body)
}

// load reads the embedded files, keyed by their path under assets/.
func load() (map[string]file, error) {
	out := map[string]file{}
	err := fs.WalkDir(files, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return fmt.Errorf("console: %s: no content type for its extension", name)
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		out[strings.TrimPrefix(name, "assets/")] = file{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := out["index.html"]; !ok {
		return nil, fmt.Errorf("console: assets/index.html is missing")
	}
	return out, nil
}
