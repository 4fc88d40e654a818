package api

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/pgtext"
)

// Media types of request bodies. A browser page may send a text/plain, form or multipart
// body to any origin without a CORS preflight; requiring a JSON type makes every body a
// page could send that way a 415, whatever the origin checks let through.
var (
	jsonTypes = []string{"application/json"}
	// catalogTypes are those of PUT /v1/sources/{name}/tools, whose body is a catalog
	// file (JSON lines, or one JSON document) rather than one JSON value.
	catalogTypes = []string{"application/json", "application/x-ndjson", "application/jsonl", "application/x-jsonlines"}
)

// requireMediaType fails with 415 unless the request's Content-Type is one of types
// (parameters such as charset aside).
func requireMediaType(r *http.Request, types []string) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || !slices.Contains(types, mt) {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
			Message: fmt.Sprintf("Content-Type %q: want %s", r.Header.Get(echo.HeaderContentType), strings.Join(types, " or "))}
	}
	return nil
}

// decodeJSON reads a JSON body strictly: a JSON Content-Type (requireMediaType), valid
// UTF-8 and no NUL in any string of v (PostgreSQL text holds neither; 400 invalid_text),
// no unknown field and no trailing data. Raw JSON inside v (json.RawMessage) is left to
// the parser that reads it.
func decodeJSON(c echo.Context, v any) error {
	if err := requireMediaType(c.Request(), jsonTypes); err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if !utf8.Valid(body) {
		return invalidText("body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("body: %v", err)
	}
	if dec.More() {
		return badRequest("body: unexpected data after the JSON object")
	}
	if path := nulString(reflect.ValueOf(v), ""); path != "" {
		return invalidText("%s contains a NUL character (U+0000)", path)
	}
	return nil
}

// nulString returns the JSON path of the first string in v (struct fields by their JSON
// names, map keys and values, slice elements) that holds a NUL, or "" when none does.
// Byte slices are skipped: json.RawMessage is checked by whatever parses it.
func nulString(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return nulString(v.Elem(), path)
	case reflect.String:
		if strings.IndexByte(v.String(), 0) >= 0 {
			return cmp.Or(path, "body")
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return ""
		}
		for i := range v.Len() {
			if p := nulString(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			kp := fmt.Sprintf("%s[%q]", path, fmt.Sprint(k))
			if p := nulString(k, kp); p != "" {
				return p
			}
			if p := nulString(v.MapIndex(k), kp); p != "" {
				return p
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
				continue
			case f.Anonymous && name == "":
				// an embedded struct's fields are the outer object's
				if p := nulString(v.Field(i), path); p != "" {
					return p
				}
				continue
			case !f.IsExported():
				continue
			case name == "":
				name = f.Name
			}
			if path != "" {
				name = path + "." + name
			}
			if p := nulString(v.Field(i), name); p != "" {
				return p
			}
		}
	}
	return ""
}

// checkParams refuses path and query parameters that cannot be PostgreSQL text (a NUL
// as %00, or invalid UTF-8): every handler may look them up in the database.
//
// Path parameters are unescaped first. Echo routes on the request's raw path when it has
// one (net/url keeps one when the escaping is not the default, e.g. lower-case hex as in
// %ff, or an escaped letter), and its parameters are then the escaped text: %ff would
// reach a handler as the three characters "%ff" (a 404 rather than a 400), and %61cme
// would not name the source acme.
func checkParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		names, values := c.ParamNames(), c.ParamValues()
		values = values[:min(len(values), len(names))]
		if c.Request().URL.RawPath != "" {
			values = slices.Clone(values)
			for i, v := range values {
				u, err := url.PathUnescape(v)
				if err != nil {
					return badRequest("path parameter %s: %v", names[i], err)
				}
				values[i] = u
			}
			c.SetParamValues(values...)
		}
		for i, v := range values {
			if p := pgtext.Problem(v); p != "" {
				return invalidText("path parameter %s %s", names[i], p)
			}
		}
		for name, values := range c.QueryParams() {
			for _, s := range append([]string{name}, values...) {
				if p := pgtext.Problem(s); p != "" {
					return invalidText("query parameter %q %s", name, p)
				}
			}
		}
		return next(c)
	}
}
