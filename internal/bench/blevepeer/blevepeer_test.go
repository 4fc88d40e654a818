package blevepeer

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func testPeer(t *testing.T) *Peer {
	t.Helper()
	p, err := New([]Tool{
		{Name: "fin__get_stock_price", Source: "fin", Description: "Current share price of a listed company.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "geo__weather_forecast", Source: "geo", Description: "Weather forecast for a city.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "mail__send_email", Source: "mail", Description: "Sends an email message to recipients.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// post sends body to the peer's POST /search and decodes the answer.
func post(t *testing.T, p *Peer, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/search", bytes.NewBufferString(body)))
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("answer %q: %v", rec.Body.String(), err)
	}
	return rec.Code, out
}

func TestSearchAnswersInToolgatesShape(t *testing.T) {
	p := testPeer(t)
	code, out := post(t, p, `{"query": "stock prices of a company", "k": 2}`)
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, out)
	}
	results := out["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("results %v, want the one tool sharing words with the query", results)
	}
	first := results[0].(map[string]any)
	if first["name"] != "fin__get_stock_price" || first["source"] != "fin" || first["lexical_rank"] != 1.0 {
		t.Errorf("first result %v", first)
	}
	fn := first["tool"].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "fin__get_stock_price" || fn["description"] != "Current share price of a listed company." {
		t.Errorf("tool %v, want the openai shape of the tool", first["tool"])
	}
	if out["mode"] != "lexical" || out["format"] != "openai" {
		t.Errorf("mode %v format %v", out["mode"], out["format"])
	}
}

func TestSearchFindsNameWords(t *testing.T) {
	p := testPeer(t)
	// "send" and "email" are only words of the name once it is split at underscores
	res, err := p.Search("send", 5, "raw")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Name != "mail__send_email" {
		t.Fatalf("results %+v", res)
	}
}

func TestSearchRejectsBadRequests(t *testing.T) {
	p := testPeer(t)
	for _, body := range []string{`{"query": ""}`, `{"query": "x", "k": 500}`, `{"query": "x", "nope": 1}`, `not json`} {
		code, out := post(t, p, body)
		e, _ := out["error"].(map[string]any)
		if code != http.StatusBadRequest || e["code"] != "invalid_request" {
			t.Errorf("%s: status %d, body %v", body, code, out)
		}
	}
}

func TestNewRefusesDuplicateNames(t *testing.T) {
	if _, err := New([]Tool{{Name: "a__x"}, {Name: "a__x"}}); err == nil {
		t.Fatal("a catalog with a name twice was indexed")
	}
}
