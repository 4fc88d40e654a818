package mcpclient_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
)

// TestCommandPolicy: an entry that is a command alone allows it with any arguments; one
// with arguments allows exactly those; nothing else is allowed, and no source may set an
// environment variable that changes what an allowed command runs.
func TestCommandPolicy(t *testing.T) {
	t.Parallel()
	p := mcpclient.NewCommandPolicy([][]string{{"mcp-server-git"}, {"npx", "-y", "@modelcontextprotocol/server-everything"}})
	for _, tc := range []struct {
		cfg mcpclient.Config
		ok  bool
	}{
		{mcpclient.Config{Command: "mcp-server-git"}, true},
		{mcpclient.Config{Command: "mcp-server-git", Args: []string{"--repository", "/srv/repo"}}, true},
		{mcpclient.Config{Command: "mcp-server-git", Env: map[string]string{"GITHUB_TOKEN": "t"}}, true},
		{mcpclient.Config{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}, true},
		{mcpclient.Config{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything", "--x"}}, false},
		{mcpclient.Config{Command: "npx", Args: []string{"-c", "sh"}}, false},
		{mcpclient.Config{Command: "npx"}, false},
		{mcpclient.Config{Command: "/usr/bin/mcp-server-git"}, false}, // compared as written
		{mcpclient.Config{Command: "sh", Args: []string{"-c", "id > /tmp/marker"}}, false},
		{mcpclient.Config{Command: "mcp-server-git", Env: map[string]string{"LD_PRELOAD": "/tmp/x.so"}}, false},
		{mcpclient.Config{Command: "mcp-server-git", Env: map[string]string{"PATH": "/tmp"}}, false},
		{mcpclient.Config{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"},
			Env: map[string]string{"NODE_OPTIONS": "--import=data:text/javascript,0"}}, false},
		{mcpclient.Config{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"},
			Env: map[string]string{"npm_config_registry": "http://evil.example.com"}}, false},
		{mcpclient.Config{Command: "mcp-server-git", Env: map[string]string{"PYTHONPATH": "/tmp"}}, false},
	} {
		err := p.Check(tc.cfg)
		var nae *mcpclient.CommandNotAllowedError
		if tc.ok != (err == nil) || (err != nil && !errors.As(err, &nae)) {
			t.Errorf("%+v: %v, want allowed %v", tc.cfg, err, tc.ok)
		}
	}
	var none mcpclient.CommandPolicy
	if err := none.Check(mcpclient.Config{Command: "mcp-server-git"}); err == nil {
		t.Error("the zero policy allowed a command")
	}
}

// TestConnectRefusesWhatThePolicyDoesNot: Connect never starts a stdio command outside the
// policy (nothing runs), while HTTP sources are not concerned.
func TestConnectRefusesWhatThePolicyDoesNot(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "marker")
	cfg := mcpclient.Config{Command: "/bin/sh", Args: []string{"-c", "touch " + marker}}
	ctx := context.Background()
	for _, opts := range []mcpclient.Options{{}, {Commands: mcptest.Commands()}} {
		_, err := mcpclient.Connect(ctx, mcpclient.KindStdio, cfg, opts)
		var nae *mcpclient.CommandNotAllowedError
		if !errors.As(err, &nae) || nae.Command != "/bin/sh" {
			t.Errorf("Connect with %v: %v, want CommandNotAllowedError", opts.Commands, err)
		}
	}
	if _, err := mcpclient.List(ctx, mcpclient.KindStdio, cfg, 5*time.Second, mcpclient.Options{}); err == nil {
		t.Error("List ran a command no policy allows")
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused command ran: %v", err)
	}
	srv := mcptest.NewHTTP(t, sampleTools(1), mcptest.Normal, 0)
	if tools, err := mcpclient.List(ctx, mcpclient.KindHTTP, srv.Config(), 10*time.Second, mcpclient.Options{}); err != nil || len(tools) != 1 {
		t.Errorf("an HTTP source under the empty policy: %d tools, %v", len(tools), err)
	}
}
