package mcpclient_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/mcpclient"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://crm.example.com/mcp":                                           "https://crm.example.com/mcp",
		"https://u:s3cret@crm.example.com/mcp":                                  "https://***:***@crm.example.com/mcp",
		"https://tok3n@crm.example.com/mcp":                                     "https://***@crm.example.com/mcp",
		"https://h/mcp?api_key=k1&region=eu&access_token=t1&X-Amz-Signature=s1": "https://h/mcp?api_key=***&region=eu&access_token=***&X-Amz-Signature=***",
		"https://h/mcp?Token=a%20b&page=2":                                      "https://h/mcp?Token=***&page=2",
		"https://h/mcp#access_token=t2&x=1":                                     "https://h/mcp#access_token=***&x=1",
		"https://h/mcp?sig":                                                     "https://h/mcp?sig",
		"http://[::1:bad":                                                       "***",
	} {
		if got := mcpclient.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// Scrub masks every credential of a config that an error text may quote, raw or
// URL-encoded, and keeps the error's identity.
func TestScrub(t *testing.T) {
	cfg := mcpclient.Config{URL: "https://user1:p%40ss@h/mcp?token=tok+en&x=1", Headers: map[string]string{"Authorization": "Bearer hdrtoken"}}
	inner := errors.New("boom")
	err := cfg.Scrub(fmt.Errorf(`Post "https://user1:p%%40ss@h/mcp?token=tok+en&x=1": user1 p@ss "tok en" hdrtoken Bearer hdrtoken: %w`, inner))
	msg := err.Error()
	for _, secret := range []string{"user1", "p@ss", "p%40ss", "tok+en", "tok en", "hdrtoken"} {
		if strings.Contains(msg, secret) {
			t.Errorf("scrubbed error %q still holds %q", msg, secret)
		}
	}
	if !strings.Contains(msg, "x=1") || !errors.Is(err, inner) {
		t.Errorf("scrubbed error %q lost its text or identity", msg)
	}
	// A URL quoted whole is shown as RedactURL shows it, even with a user name too short
	// to be masked alone.
	short := mcpclient.Config{URL: "https://me:pw@h/mcp?key=k&x=1"}
	msg = short.Scrub(errors.New(`Post "https://me:***@h/mcp?key=k&x=1": refused; also https://me:pw@h/mcp?key=k&x=1`)).Error()
	if want := `Post "https://***:***@h/mcp?key=***&x=1": refused; also https://***:***@h/mcp?key=***&x=1`; msg != want {
		t.Errorf("scrubbed = %q, want %q", msg, want)
	}
	if (mcpclient.Config{}).Scrub(nil) != nil {
		t.Error("Scrub(nil) != nil")
	}
}
