package mcpclient

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A source's configured headers go to its own origin only (same scheme, host and port).
func TestHeadersOnlyToTheSourceOrigin(t *testing.T) {
	var got http.Header
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r.Header
		return &http.Response{StatusCode: http.StatusAccepted, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}, nil
	})
	u, _ := url.Parse("https://mcp.example:8443/mcp")
	tr := headerTransport{headers: map[string]string{"Authorization": "Bearer s3cret"}, origin: origin(u), base: base, maxResponse: 1 << 10}
	for target, want := range map[string]bool{
		"https://MCP.example:8443/mcp?x=1": true,
		"https://mcp.example:8444/mcp":     false,
		"http://mcp.example:8443/mcp":      false,
		"https://other.example:8443/mcp":   false,
	} {
		r, _ := http.NewRequest(http.MethodPost, target, nil)
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if sent := got.Get("Authorization") != ""; sent != want {
			t.Errorf("%s: headers sent %v, want %v", target, sent, want)
		}
	}
}
