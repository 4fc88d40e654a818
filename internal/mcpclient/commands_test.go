package mcpclient_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	p := mcpclient.NewCommandPolicy([][]string{{"mcp-server-git", "env=GITHUB_TOKEN"}, {"npx", "-y", "@modelcontextprotocol/server-everything"}})
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

// TestCommandPolicyEnvIsAllowList: a source may set only the environment variables its
// command's entry names (env=NAME:NAME); by default none. Every variable below changed
// what an allowed command runs, or where it fetches code from, or whom it trusts, and was
// accepted while the policy was a deny-list.
func TestCommandPolicyEnvIsAllowList(t *testing.T) {
	t.Parallel()
	everything := []string{"-y", "@modelcontextprotocol/server-everything"}
	p := mcpclient.NewCommandPolicy([][]string{
		{"npx", "-y", "@modelcontextprotocol/server-everything"},
		{"mcp-server-git", "env=GITHUB_TOKEN:LOG_LEVEL"},
	})
	hostile := []string{"PREFIX", "HTTPS_PROXY", "https_proxy", "NODE_TLS_REJECT_UNAUTHORIZED", "NODE_EXTRA_CA_CERTS",
		"LUA_INIT", "DOTNET_STARTUP_HOOKS", "ERL_FLAGS", "GCONV_PATH", "HOSTALIASES", "SSL_CERT_FILE",
		"COREPACK_NPM_REGISTRY", "XDG_CONFIG_HOME", "PATH", "HOME", "LD_PRELOAD", "NODE_OPTIONS", "npm_config_registry"}
	for _, name := range hostile {
		for _, cfg := range []mcpclient.Config{
			{Command: "npx", Args: everything, Env: map[string]string{name: "x"}},
			{Command: "mcp-server-git", Env: map[string]string{name: "x", "GITHUB_TOKEN": "t"}},
		} {
			err := p.Check(cfg)
			var nae *mcpclient.CommandNotAllowedError
			if !errors.As(err, &nae) || nae.Env != name {
				t.Errorf("%s for %s: %v, want refused", name, cfg.Command, err)
			}
		}
	}
	for _, cfg := range []mcpclient.Config{
		{Command: "npx", Args: everything},
		{Command: "mcp-server-git", Args: []string{"--repository", "/srv"}, Env: map[string]string{"GITHUB_TOKEN": "t", "LOG_LEVEL": "warn"}},
	} {
		if err := p.Check(cfg); err != nil {
			t.Errorf("%+v: %v, want allowed", cfg, err)
		}
	}
	// Names are compared exactly, as the environment compares them.
	if err := p.Check(mcpclient.Config{Command: "mcp-server-git", Env: map[string]string{"github_token": "t"}}); err == nil {
		t.Error("github_token allowed by GITHUB_TOKEN")
	}
	// The env= word is no argument: the entry still allows mcp-server-git with any.
	if got := p.String(); got != "npx -y @modelcontextprotocol/server-everything,mcp-server-git env=GITHUB_TOKEN:LOG_LEVEL" {
		t.Errorf("String() = %q", got)
	}
}

// TestStdioServerEnvironment: a stdio server sees PATH and HOME of toolgate's environment
// and the variables its source sets, and nothing else of toolgate's: no database URL, no
// TOOLGATE_ setting, no provider key. The server lists its own environment as its tools.
func TestStdioServerEnvironment(t *testing.T) {
	for k, v := range map[string]string{"DATABASE_URL": "postgres://u:secret@db/toolgate", "TOOLGATE_ADMIN_KEY": "tg-secret",
		"OPENAI_API_KEY": "sk-secret", "HTTPS_PROXY": "http://proxy.example.com"} {
		t.Setenv(k, v)
	}
	cfg := mcptest.NewStdio(t, nil, mcptest.EnvTools, 0).Config()
	cfg.Env["API_KEY"] = "for-the-server"
	policy := mcpclient.NewCommandPolicyOf(mcpclient.AllowedCommand{Words: []string{os.Args[0]}, Env: append([]string{"API_KEY"}, mcptest.EnvNames...)})
	tools, err := mcpclient.List(context.Background(), mcpclient.KindStdio, cfg, 10*time.Second, mcpclient.Options{Commands: policy})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, tool := range tools {
		seen = append(seen, tool.Name)
	}
	allowed := append([]string{"PATH", "HOME", "API_KEY"}, mcptest.EnvNames...)
	for _, name := range seen {
		if !slices.Contains(allowed, name) {
			t.Errorf("the server sees %s", name)
		}
	}
	for _, name := range []string{"PATH", "API_KEY"} {
		if !slices.Contains(seen, name) {
			t.Errorf("the server does not see %s (it sees %v)", name, seen)
		}
	}
	// A source stored with a variable the policy does not (or no longer) allows is refused
	// at run time: nothing starts.
	_, err = mcpclient.List(context.Background(), mcpclient.KindStdio, cfg, 10*time.Second, mcpclient.Options{Commands: mcptest.Commands()})
	var nae *mcpclient.CommandNotAllowedError
	if !errors.As(err, &nae) || nae.Env != "API_KEY" {
		t.Fatalf("a stored env the policy no longer allows: %v", err)
	}
}
