package search

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/pgtext"
	"github.com/toolgate/toolgate/internal/plan"
)

// FuzzDecodeRequest: any POST /search body either fails to decode, or decodes into a
// request that normalize rejects with an *InvalidRequestError or turns into one the search
// statement can run (checkNormalized). An explicit "k" is never replaced by the default.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"stock price"}`,
		`{"query":"stock price","k":0}`,
		`{"query":"stock price","k":3,"mode":"lexical","format":"anthropic","plan":"full"}`,
		`{"query":"x","k":101}`, `{"query":"x","k":-1}`, `{"query":"x","k":1e400}`, `{"query":"x","k":"3"}`,
		`{"query":"a\u0000b"}`,
		`{"query":"x","queries":["ok","\u0000"]}`,
		`{"query":"x","sources":["fin\u0000"]}`,
		`{"query":"x","tags":["A","\u0000"]}`,
		`{"query":"x","profile":"p\u0000"}`,
		`{"query":"x","session_id":"\u0000"}`,
		`{"query":"x","mode":"\u0000"}`,
		"{\"query\":\"\xff\xfe\"}",
		`{"query":"\ud800"}`,
		`{"query":"  ","plan":"decompose"}`,
		`{"query":"x","queries":["y"],"plan":"full"}`,
		`{"query":"x","unknown":1}`,
		`{"query":"x","rerank":false}`,
		`{"K":0,"query":"x"}`,
		`{"k":1,"k":0,"query":"x"}`,
		`[]`, `null`, `{}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r Request
		if err := json.Unmarshal(body, &r); err != nil {
			return
		}
		n, err := normalize(r)
		if err != nil {
			var inv *InvalidRequestError
			if !errors.As(err, &inv) {
				t.Fatalf("%q: error %T %v, want *InvalidRequestError", body, err, err)
			}
			return
		}
		checkNormalized(t, n)
		// An explicit k is the caller's: the default is only for an absent one.
		var fields map[string]json.RawMessage
		if json.Unmarshal(body, &fields) == nil {
			if raw, ok := fields["k"]; ok {
				var k int
				if json.Unmarshal(raw, &k) == nil && n.K != k {
					t.Fatalf("%q: k %d became %d", body, k, n.K)
				}
			}
		}
	})
}

// FuzzNormalize: normalize on any field values (also invalid UTF-8, which a JSON body
// cannot carry but a Go caller can) rejects them with an *InvalidRequestError or returns a
// request the search statement can run.
func FuzzNormalize(f *testing.F) {
	f.Add("stock price", "share quote", "fin", "Finance", "", "", 0)
	f.Add("a\x00b", "", "", "", "", "", 3)
	f.Add("\xff", "", "", "", "", "", 3)
	f.Add("x", "\x00", "", "", "", "", 3)
	f.Add("x", "", "f\xffin", "", "", "", 3)
	f.Add("x", "", "", "\x00", "", "", 3)
	f.Add("x", "", "", "", "p\x00", "", 3)
	f.Add("x", "", "", "", "", "s\xc3", 3)
	f.Add(strings.Repeat("é", MaxQueryChars+1), "", "", "", "", "", 100)
	f.Add(" x ", " y ", " fin ", " TAG ", " default ", "s", -1)
	f.Fuzz(func(t *testing.T, query, variant, source, tag, profile, session string, k int) {
		r := Request{Query: query, K: k, Profile: profile, SessionID: session}
		if variant != "" {
			r.Queries = []string{variant}
		}
		if source != "" {
			r.Sources = []string{source}
		}
		if tag != "" {
			r.Tags = []string{tag}
		}
		n, err := normalize(r)
		if err != nil {
			var inv *InvalidRequestError
			if !errors.As(err, &inv) {
				t.Fatalf("%+v: error %T %v, want *InvalidRequestError", r, err, err)
			}
			return
		}
		checkNormalized(t, n)
	})
}

// checkNormalized fails unless n is a request the search statement can run: texts
// PostgreSQL can hold, within the documented limits, defaults filled in, and stable under
// a second normalize.
func checkNormalized(t *testing.T, n Request) {
	t.Helper()
	texts := append([]string{n.Query, n.Profile, n.SessionID, string(n.Mode), string(n.Format), string(n.Plan)}, n.Queries...)
	texts = append(append(texts, n.Sources...), n.Tags...)
	for _, s := range texts {
		if p := pgtext.Problem(s); p != "" {
			t.Fatalf("%+v: normalized text %q %s", n, s, p)
		}
	}
	for _, q := range append([]string{n.Query}, n.Queries...) {
		if q == "" || q != strings.TrimSpace(q) || utf8.RuneCountInString(q) > MaxQueryChars {
			t.Fatalf("%+v: query or variant %q", n, q)
		}
	}
	if len(n.Queries) > MaxVariants || n.K < 1 || n.K > MaxK {
		t.Fatalf("%+v: %d variants, k %d", n, len(n.Queries), n.K)
	}
	if !slices.Contains([]Mode{ModeHybrid, ModeLexical, ModeVector}, n.Mode) ||
		!slices.Contains([]Format{FormatOpenAI, FormatAnthropic, FormatMCP, FormatRaw}, n.Format) ||
		!slices.Contains([]plan.Mode{plan.ModeNone, plan.ModeRewrite, plan.ModeDecompose, plan.ModeFull}, n.Plan) {
		t.Fatalf("%+v: mode, format or plan not filled in", n)
	}
	for _, list := range [][]string{n.Sources, n.Tags} {
		if len(list) > maxFilter {
			t.Fatalf("%+v: %d filter entries", n, len(list))
		}
		for _, s := range list {
			if s == "" || utf8.RuneCountInString(s) > maxName {
				t.Fatalf("%+v: filter entry %q", n, s)
			}
		}
	}
	if utf8.RuneCountInString(n.Profile) > maxName || utf8.RuneCountInString(n.SessionID) > maxName {
		t.Fatalf("%+v: profile or session id too long", n)
	}
	again, err := normalize(n)
	if err != nil || !reflect.DeepEqual(again, n) {
		t.Fatalf("normalize is not stable: %+v → %+v, %v", n, again, err)
	}
}
