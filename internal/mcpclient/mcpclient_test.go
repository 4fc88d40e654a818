package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.RunIfChild()
	os.Exit(m.Run())
}

func sampleTools(n int) []catalog.Tool {
	tools := make([]catalog.Tool, n)
	for i := range tools {
		tools[i] = catalog.Tool{
			Name: fmt.Sprintf("tool%02d", i), Description: fmt.Sprintf("does thing %d", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
		}
	}
	tools[0].Title = "First"
	tools[0].OutputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	tools[0].Annotations = json.RawMessage(`{"readOnlyHint":true}`)
	return tools
}

type server interface{ Config() mcpclient.Config }

func transports(t *testing.T, tools []catalog.Tool, b mcptest.Behavior, pageSize int) map[db.SourceKind]server {
	return map[db.SourceKind]server{
		mcpclient.KindHTTP:  mcptest.NewHTTP(t, tools, b, pageSize),
		mcpclient.KindStdio: mcptest.NewStdio(t, tools, b, pageSize),
	}
}

func TestListFollowsPagination(t *testing.T) {
	want := sampleTools(7)
	for kind, srv := range transports(t, want, mcptest.Normal, 3) {
		t.Run(string(kind), func(t *testing.T) {
			got, err := mcpclient.List(context.Background(), kind, srv.Config(), 20*time.Second, mcpclient.Options{Commands: mcptest.Commands()})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d tools, want %d", len(got), len(want))
			}
			byName := map[string]catalog.Tool{}
			for _, g := range got {
				if err := g.Validate(); err != nil {
					t.Fatalf("listed tool invalid: %v", err)
				}
				byName[g.Name] = g
			}
			for _, w := range want {
				g, ok := byName[w.Name]
				if !ok {
					t.Fatalf("tool %s missing", w.Name)
				}
				if g.Title != w.Title || g.Description != w.Description {
					t.Errorf("%s: got title %q description %q", w.Name, g.Title, g.Description)
				}
				for field, pair := range map[string][2]json.RawMessage{
					"input": {g.InputSchema, w.InputSchema}, "output": {g.OutputSchema, w.OutputSchema},
				} {
					if canon(t, pair[0]) != canon(t, pair[1]) {
						t.Errorf("%s %s schema: got %s want %s", w.Name, field, pair[0], pair[1])
					}
				}
			}
			var ann map[string]any
			if err := json.Unmarshal(byName["tool00"].Annotations, &ann); err != nil || ann["readOnlyHint"] != true {
				t.Errorf("annotations: got %s", byName["tool00"].Annotations)
			}
		})
	}
}

func canon(t *testing.T, raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	c, err := catalog.Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(c)
}

func wantKind(t *testing.T, err error, kind mcpclient.ErrorKind) {
	t.Helper()
	var e *mcpclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want *mcpclient.Error", err, err)
	}
	if e.Kind != kind {
		t.Fatalf("got kind %s (%v), want %s", e.Kind, err, kind)
	}
}

func TestFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	tools := sampleTools(4)
	cases := []struct {
		name    string
		kind    db.SourceKind
		cfg     mcpclient.Config
		timeout time.Duration
		want    mcpclient.ErrorKind
	}{
		{"http unreachable", mcpclient.KindHTTP, mcpclient.Config{URL: closed}, 10 * time.Second, mcpclient.Unreachable},
		{"stdio missing command", mcpclient.KindStdio, mcpclient.Config{Command: "/nonexistent/mcp-server"}, 10 * time.Second, mcpclient.Unreachable},
		{"http hang", mcpclient.KindHTTP, mcptest.NewHTTP(t, tools, mcptest.Hang, 0).Config(), time.Second, mcpclient.Timeout},
		{"stdio hang", mcpclient.KindStdio, mcptest.NewStdio(t, tools, mcptest.Hang, 0).Config(), time.Second, mcpclient.Timeout},
		{"http error answer", mcpclient.KindHTTP, mcptest.NewHTTP(t, tools, mcptest.Fail, 0).Config(), 10 * time.Second, mcpclient.Protocol},
		{"stdio crash mid-listing", mcpclient.KindStdio, mcptest.NewStdio(t, tools, mcptest.Crash, 2).Config(), 10 * time.Second, mcpclient.Unreachable},
		{"stdio garbage", mcpclient.KindStdio, mcptest.NewStdio(t, tools, mcptest.Garbage, 0).Config(), 10 * time.Second, mcpclient.Protocol},
	}
	commands := mcpclient.NewCommandPolicyOf(mcpclient.AllowedCommand{Words: []string{os.Args[0]}, Env: mcptest.EnvNames},
		mcpclient.AllowedCommand{Words: []string{"/nonexistent/mcp-server"}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := mcpclient.List(context.Background(), c.kind, c.cfg, c.timeout, mcpclient.Options{Commands: commands})
			if got != nil {
				t.Errorf("got %d tools with an error", len(got))
			}
			wantKind(t, err, c.want)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []struct {
		kind db.SourceKind
		cfg  mcpclient.Config
	}{
		{mcpclient.KindStdio, mcpclient.Config{}},
		{mcpclient.KindStdio, mcpclient.Config{Command: "node", URL: "http://x"}},
		{mcpclient.KindStdio, mcpclient.Config{Command: "node", Env: map[string]string{"A=B": "x"}}},
		{mcpclient.KindHTTP, mcpclient.Config{URL: "ftp://host/x"}},
		{mcpclient.KindHTTP, mcpclient.Config{URL: "/relative"}},
		{mcpclient.KindHTTP, mcpclient.Config{URL: "https://h/x", Headers: map[string]string{"Bad Header": "v"}}},
		{mcpclient.KindHTTP, mcpclient.Config{URL: "https://h/x", Headers: map[string]string{"X": "a\r\nb"}}},
		{mcpclient.KindHTTP, mcpclient.Config{URL: "https://h/x", Command: "node"}},
		{"catalog", mcpclient.Config{}},
	}
	for i, b := range bad {
		var ce *mcpclient.ConfigError
		if err := b.cfg.Validate(b.kind); !errors.As(err, &ce) {
			t.Errorf("case %d: got %v, want *ConfigError", i, err)
		}
	}
	if err := (mcpclient.Config{URL: "https://h/x", Headers: map[string]string{"Authorization": "Bearer x"}}).Validate(mcpclient.KindHTTP); err != nil {
		t.Error(err)
	}
}
