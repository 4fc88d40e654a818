package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

func TestSyncCommand(t *testing.T) {
	dbURL := pgtest.NewDB(t)
	pool, err := postgres.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	srv := mcptest.NewHTTP(t, []catalog.Tool{
		{Name: "a", Description: "A.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "b", Description: "B.", InputSchema: json.RawMessage(`{"type":"object","required":"x"}`)},
	}, mcptest.Normal, 0)
	cfg, _ := json.Marshal(srv.Config())
	if _, err := db.New(pool).CreateSource(context.Background(), db.CreateSourceParams{Name: "web", Kind: "mcp_http", Config: cfg}); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"sync", "web"}, getenv, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "web: 1 created, 0 updated, 0 deleted, 0 unchanged, 0 pending review, 1 skipped\n  skipped b: ") {
		t.Fatalf("output %q", got)
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"sync", "nope"}, getenv, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), `source "nope" not found`) {
		t.Fatalf("exit %d: %q", code, errOut.String())
	}
	if code := run([]string{"sync"}, getenv, &out, &errOut); code != 2 {
		t.Fatalf("missing name: exit %d", code)
	}

	// A stored mcp_stdio source runs only what TOOLGATE_STDIO_COMMANDS allows now.
	marker := filepath.Join(t.TempDir(), "marker")
	shell, _ := json.Marshal(map[string]any{"command": "/bin/sh", "args": []string{"-c", "touch " + marker}})
	if _, err := db.New(pool).CreateSource(context.Background(), db.CreateSourceParams{Name: "shell", Kind: "mcp_stdio", Config: shell}); err != nil {
		t.Fatal(err)
	}
	for _, allowed := range []string{"", "npx,/bin/sh -c true"} {
		env := func(k string) string {
			if k == "TOOLGATE_STDIO_COMMANDS" {
				return allowed
			}
			return getenv(k)
		}
		out.Reset()
		errOut.Reset()
		if code := run([]string{"sync", "shell"}, env, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "not in TOOLGATE_STDIO_COMMANDS") {
			t.Fatalf("TOOLGATE_STDIO_COMMANDS=%q: exit %d: %q", allowed, code, errOut.String())
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused command ran: %v", err)
	}
}
