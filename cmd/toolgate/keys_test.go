package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

func TestKeysCommand(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDB(t)
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return url
		}
		return ""
	}
	toolgate := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(args, getenv, &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, _, stderr := toolgate("keys", "create", "--name", "first-admin", "--scope", "search", "--sources", "fin")
	if code == 0 || !strings.Contains(stderr, `no source is named "fin"`) {
		t.Errorf("keys create naming a missing source: exit %d, stderr %q", code, stderr)
	}
	for _, src := range []string{"fin", "news"} {
		if code, _, stderr := toolgate("import", writeFile(t, t.TempDir(), "tools.jsonl", `{"name":"quote","description":"Quote."}`), "--source", src); code != 0 {
			t.Fatalf("import %s: exit %d: %s", src, code, stderr)
		}
	}
	code, out, stderr := toolgate("keys", "create", "--name", "first-admin", "--scope", "search", "--sources", "fin, news", "--rate", "30")
	if code != 0 {
		t.Fatalf("keys create: exit %d: %s", code, stderr)
	}
	text := strings.TrimSpace(out)
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(text, "tg_") {
		t.Fatalf("keys create stdout = %q, want the key alone on one line", out)
	}
	if strings.Contains(stderr, text) {
		t.Errorf("the key is printed twice (stderr: %q)", stderr)
	}

	ctx := context.Background()
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	keys := auth.NewKeys(pool, time.Now)
	k, err := keys.Verify(ctx, text)
	if err != nil {
		t.Fatalf("printed key does not verify: %v", err)
	}
	if k.Name != "first-admin" || k.Scope != auth.ScopeSearch || k.RatePerMin != 30 || strings.Join(k.Sources, ",") != "fin,news" {
		t.Errorf("stored key = %+v", k)
	}

	code, out, _ = toolgate("keys", "list")
	secret := text[strings.LastIndex(text, "_")+1:]
	if code != 0 || !strings.Contains(out, "first-admin") || !strings.Contains(out, k.Prefix) || strings.Contains(out, secret) {
		t.Errorf("keys list: exit %d, output:\n%s", code, out)
	}

	code, out, _ = toolgate("keys", "revoke", "first-admin")
	if code != 0 || !strings.Contains(out, k.Prefix) {
		t.Errorf("keys revoke: exit %d, output %q", code, out)
	}
	if _, err := keys.Verify(ctx, text); !errors.Is(err, auth.ErrRevokedKey) {
		t.Errorf("after revoke, Verify = %v, want ErrRevokedKey", err)
	}

	for _, args := range [][]string{
		{"keys"},
		{"keys", "create", "--name", "x"},
		{"keys", "create", "--name", "x", "--scope", "root"},
		{"keys", "create", "--name", "x", "--scope", "admin", "--sources", "fin"},
		{"keys", "revoke"},
		{"keys", "revoke", "nobody"},
		{"keys", "rotate"},
	} {
		code, out, stderr := toolgate(args...)
		if code == 0 || out != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a non-zero exit and one error line", args, code, out, stderr)
		}
	}
}
