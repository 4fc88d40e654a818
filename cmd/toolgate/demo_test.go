package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// demo --keys prints an admin key and a search key that sees the demo source only; a second
// run revokes the first run's keys, whose text nobody has any more, and prints new ones.
func TestDemoKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	testfactory.Catalog(ctx, t, pool, "demo", []catalog.Tool{{Name: "a", Description: "A"}}, nil)
	testfactory.Catalog(ctx, t, pool, "other", []catalog.Tool{{Name: "b", Description: "B"}}, nil)
	keys := auth.NewKeys(pool, time.Now)
	run := func() map[string]string {
		var out bytes.Buffer
		env := &cliEnv{log: slog.New(slog.DiscardHandler), stdout: &out, stderr: &out}
		if err := demoKeys(ctx, env, pool); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for line := range strings.Lines(out.String()) {
			name, value, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok {
				t.Fatalf("stdout line %q is not NAME=VALUE", line)
			}
			got[name] = value
		}
		if len(got) != 2 || got["ADMIN_KEY"] == "" || got["SEARCH_KEY"] == "" {
			t.Fatalf("stdout %q: want ADMIN_KEY= and SEARCH_KEY=", out.String())
		}
		return got
	}
	first := run()
	admin, err := keys.Verify(ctx, first["ADMIN_KEY"])
	if err != nil || admin.Scope != auth.ScopeAdmin || admin.Name != demoAdminKey {
		t.Fatalf("admin key: %+v, %v", admin, err)
	}
	search, err := keys.Verify(ctx, first["SEARCH_KEY"])
	if err != nil || search.Scope != auth.ScopeSearch || !slices.Equal(search.Sources, []string{"demo"}) {
		t.Fatalf("search key: %+v, %v", search, err)
	}
	second := run()
	for _, text := range first {
		if _, err := keys.Verify(ctx, text); err == nil {
			t.Errorf("a key of the first run still works after the second")
		}
	}
	for _, text := range second {
		if _, err := keys.Verify(ctx, text); err != nil {
			t.Errorf("a key of the second run: %v", err)
		}
	}
}

// The keyed demo serves with its keys: the search key sees the demo source only and is
// refused the admin routes, the admin key is not, and no key gets nothing.
func TestKeyedDemoServes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	addr := freeAddr(t)
	demo := exec.Command(os.Args[0], "demo", "--keys", "--companies", "2", "--listen", addr)
	demo.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+pgtest.NewDB(t), "TOOLGATE_LOG_LEVEL=warn")
	stdout, err := demo.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	demo.Stderr = &logs
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = demo.Process.Kill()
		_ = demo.Wait()
		if t.Failed() {
			t.Logf("demo log:\n%s", tail(logs.Bytes(), 4000))
		}
	})
	// The keys come before the server listens.
	keys := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for len(keys) < 2 && sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), "=")
		keys[name] = value
	}
	if keys["ADMIN_KEY"] == "" || keys["SEARCH_KEY"] == "" {
		t.Fatalf("stdout gave %v (%v)", keys, sc.Err())
	}
	base := "http://" + addr
	waitReady(t, base)

	get := func(path, key string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		return resp.StatusCode, body.Bytes()
	}
	code, body := get("/v1/whoami", keys["SEARCH_KEY"])
	var who struct {
		Kind    string   `json:"kind"`
		Sources []string `json:"sources"`
	}
	if err := json.Unmarshal(body, &who); code != http.StatusOK || err != nil || who.Kind != "search" || !slices.Equal(who.Sources, []string{"demo"}) {
		t.Fatalf("whoami with the search key: %d %s", code, body)
	}
	for _, c := range []struct {
		key  string
		want int
	}{{keys["SEARCH_KEY"], http.StatusForbidden}, {keys["ADMIN_KEY"], http.StatusOK}, {"", http.StatusUnauthorized}} {
		if code, body := get("/v1/sources", c.key); code != c.want {
			t.Errorf("GET /v1/sources: %d %s, want %d", code, body, c.want)
		}
	}
}
