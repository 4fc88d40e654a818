package httpguard_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/internal/httpguard"
)

func TestCheckOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host, origin, site string
		ok                 bool
	}{
		{"127.0.0.1:8080", "", "", true},                      // curl, SDKs
		{"127.0.0.1:8080", "http://127.0.0.1:8080", "", true}, // same origin
		{"localhost:8080", "http://LOCALHOST:8080", "same-origin", true},
		{"localhost:8080", "", "none", true},
		{"127.0.0.1:8080", "http://evil.example.com", "", false},
		{"127.0.0.1:8080", "http://127.0.0.1:3000", "", false}, // another port is another origin
		{"127.0.0.1:8080", "null", "", false},
		{"127.0.0.1:8080", "", "cross-site", false},
		{"localhost:8080", "", "same-site", false},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", "cross-site", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		err := httpguard.CheckOrigin(r)
		var coe *httpguard.CrossOriginError
		if tc.ok != (err == nil) || (err != nil && !errors.As(err, &coe)) {
			t.Errorf("Host %s Origin %q Sec-Fetch-Site %q: %v, want ok %v", tc.host, tc.origin, tc.site, err, tc.ok)
		}
	}
}

func TestCheckRebindingHost(t *testing.T) {
	t.Parallel()
	for host, ok := range map[string]bool{
		"localhost": true, "localhost:8080": true, "127.0.0.1:8080": true, "[::1]:8080": true,
		"192.168.1.5:8080": true, "[2001:db8::1]": true,
		"evil.example.com": false, "evil.example.com:8080": false, "localhost.evil.example.com:8080": false, "": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		if err := httpguard.CheckRebindingHost(r); ok != (err == nil) {
			t.Errorf("Host %q: %v, want ok %v", host, err, ok)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost": true, "localhost:80": true, "127.0.0.1:8080": true, "127.5.0.1": true, "[::1]:8080": true, "::1": true,
		"0.0.0.0:8080": false, "192.168.1.5": false, "example.com": false, "": false,
	} {
		if got := httpguard.IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}
