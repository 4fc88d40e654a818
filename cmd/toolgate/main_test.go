package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

// runCLI runs toolgate in-process with the given settings.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadSettingFailsWithOneLine(t *testing.T) {
	code, _, stderr := runCLI(t, map[string]string{"LISTEN_ADDR": "nope"}, "serve")
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "LISTEN_ADDR") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	// Open mode serves loopback only unless TOOLGATE_OPEN_REMOTE says otherwise. (The
	// database is unreachable: the setting must fail before it is needed.)
	noDB := map[string]string{"DATABASE_URL": "postgres://postgres@127.0.0.1:1/none?connect_timeout=1"}
	for _, args := range [][]string{{"serve", "--open", "--listen", "0.0.0.0:8080"}, {"demo", "--listen", "0.0.0.0:8080"}} {
		code, _, stderr = runCLI(t, noDB, args...)
		if code != 2 || !strings.Contains(stderr, "LISTEN_ADDR") || !strings.Contains(stderr, "TOOLGATE_OPEN_REMOTE") {
			t.Fatalf("%v: code %d, stderr %q", args, code, stderr)
		}
	}
	code, _, stderr = runCLI(t, nil, "demo", "--companies", "0")
	if code != 2 || !strings.Contains(stderr, "companies") {
		t.Fatalf("demo --companies 0: code %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, nil, "frobnicate")
	if code != 2 || !strings.Contains(stderr, "unknown command") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
}

func TestImportAndMigrateCommands(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": pgtest.NewDB(t)}
	dir := t.TempDir()
	good := filepath.Join(dir, "tools.jsonl")
	os.WriteFile(good, []byte(`{"name":"a","description":"A"}`+"\n"+`{"name":"b","description":"B"}`+"\n"), 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"name":"a"}`+"\n"+`{"name":"a"}`+"\n"), 0o644)

	code, stdout, stderr := runCLI(t, env, "import", good, "--source", "local")
	if code != 0 || !strings.Contains(stdout, "2 created") || !strings.Contains(stderr, "import: 2 tools read from "+good) ||
		!strings.Contains(stderr, "enrich and embed the 2 new or changed tools: follow them with GET /v1/sources/local") {
		t.Fatalf("import: %d %q %q", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, env, "import", "--source", "local", bad)
	if code != 1 || !strings.Contains(stderr, "line 2") || !strings.Contains(stderr, "duplicate") {
		t.Fatalf("bad import: %d %q", code, stderr)
	}
	// Names as real servers give them are imported under their catalog names.
	named := filepath.Join(dir, "named.jsonl")
	os.WriteFile(named, []byte(`{"name":"PDF&URLTool","description":"PDF"}`+"\n"+`{"name":"requestFirst Aid Assistance","description":"Aid"}`+"\n"), 0o644)
	if code, stdout, stderr = runCLI(t, env, "import", named, "--source", "named"); code != 0 || !strings.Contains(stdout, "2 created") {
		t.Fatalf("import of server names: %d %q %q", code, stdout, stderr)
	}
	// A tool whose text PostgreSQL cannot store is refused in one line naming it.
	nul := filepath.Join(dir, "nul.jsonl")
	os.WriteFile(nul, []byte(`{"name":"a","description":"A"}`+"\n"+`{"name":"pdf_tool","description":"Reads PDFs.\u0000"}`+"\n"), 0o644)
	code, _, stderr = runCLI(t, env, "import", nul, "--source", "local")
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "line 2 (pdf_tool): description contains a NUL character") {
		t.Fatalf("import with a NUL: %d %q", code, stderr)
	}
	code, stdout, _ = runCLI(t, env, "import", good, "--source", "local")
	if code != 0 || !strings.Contains(stdout, "2 unchanged") {
		t.Fatalf("re-import: %d %q", code, stdout)
	}
	if code, _, stderr = runCLI(t, env, "import", good); code != 2 || !strings.Contains(stderr, "--source") {
		t.Fatalf("missing --source: %d %q", code, stderr)
	}
	code, stdout, _ = runCLI(t, env, "migrate", "version")
	if code != 0 || !strings.Contains(stdout, "river tables current: true") {
		t.Fatalf("migrate version: %d %q", code, stdout)
	}
	if code, _, stderr = runCLI(t, env, "migrate", "sideways"); code != 2 {
		t.Fatalf("bad migrate action: %d %q", code, stderr)
	}
}

// Upgrading a catalog indexed the old way (migration 0004's triggers) to the lexical index v2:
// `toolgate migrate up` leaves every searchable tool indexed, nothing queued, when it returns.
func TestMigrateUpIndexesAnUpgradedCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// back to version 10, the last with migration 0004's index
	if err := postgres.MigrateDownTo(ctx, pool, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO sources (name, kind) VALUES ('old', 'catalog');
		INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash, enabled)
		SELECT s.id, 'old__t' || g, 't' || g, 'Old tool number ' || g, '{"type":"object"}', 'h', g % 5 <> 0
		FROM sources s, generate_series(1, 40) g`); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": url}
	if code, _, stderr := runCLI(t, env, "migrate", "up"); code != 0 {
		t.Fatalf("migrate up: %d %q", code, stderr)
	}
	var indexed, searchable, queued int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM search_docs),
		(SELECT count(*) FROM tools WHERE enabled), (SELECT count(*) FROM search_queue)`).Scan(&indexed, &searchable, &queued); err != nil {
		t.Fatal(err)
	}
	if indexed != 32 || searchable != 32 || queued != 0 {
		t.Fatalf("after migrate up: %d indexed, %d searchable, %d queued", indexed, searchable, queued)
	}
}

// waitReady waits until the server at base (started by the test) answers /readyz with 200,
// failing the test after a minute (a bound on a hang, not a timing assertion). Readiness
// is what the server exposes for this; it comes after migrations, so it is polled.
func waitReady(t *testing.T, base string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never became ready: %v", err)
		}
	}
}

// freeAddr is a loopback address with a port free a moment ago, for a server the test starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Upgrading to character pairs (migration 0021) queues again the tools whose text holds
// Chinese, Japanese or Korean, and only those: after `migrate up` a Chinese word finds them.
func TestMigrateUpIndexesCJKToolsAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.MigrateDownTo(ctx, pool, 20); err != nil {
		t.Fatal(err)
	}
	// two tools indexed long ago (their queue rows gone), one described in Chinese
	if _, err := pool.Exec(ctx, `
		INSERT INTO sources (name, kind) VALUES ('rail', 'catalog');
		INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT s.id, 'rail__' || n, n, d, '{"type":"object"}', 'h'
		FROM sources s, (VALUES ('station', '查询车站的详细信息'), ('weather', 'Get the weather.')) v (n, d);
		DELETE FROM search_queue;`); err != nil {
		t.Fatal(err)
	}
	// migration 0021 alone (MigrateDownTo goes to a version either way); later migrations
	// may queue every tool (0025 does)
	if err := postgres.MigrateDownTo(ctx, pool, 21); err != nil {
		t.Fatal(err)
	}
	var queued []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(DISTINCT t.name) FROM search_queue q JOIN tools t ON t.id = q.tool_id`).Scan(&queued); err != nil {
		t.Fatal(err)
	}
	if len(queued) != 1 || queued[0] != "rail__station" {
		t.Fatalf("migration 0021 queued %v, want rail__station only", queued)
	}
	if code, _, stderr := runCLI(t, map[string]string{"DATABASE_URL": url}, "migrate", "up"); code != 0 {
		t.Fatalf("migrate up: %d %q", code, stderr)
	}
	var indexed []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(t.name ORDER BY t.name) FROM search_docs d JOIN tools t ON t.id = d.tool_id
		WHERE '车站' = ANY (d.lexemes)`).Scan(&indexed); err != nil {
		t.Fatal(err)
	}
	if len(indexed) != 1 || indexed[0] != "rail__station" {
		t.Fatalf("after migrate up: %v hold 车站; want rail__station", indexed)
	}
}

// Upgrading to per-language documents (migration 0025) indexes every tool again, each in
// its language: a German tool indexed before in English gets German stems.
func TestMigrateUpIndexesToolsInTheirLanguage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.MigrateDownTo(ctx, pool, 24); err != nil { // before 0025
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO sources (name, kind) VALUES ('wetter', 'catalog');
		INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT s.id, 'wetter__' || n, n, d, '{"type":"object"}', 'h'
		FROM sources s, (VALUES ('forecast', 'Ruft die Wettervorhersagen für eine Stadt ab und gibt sie zurück.'),
		                        ('weather', 'Get the weather.')) v (n, d);
		DELETE FROM search_queue;`); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, map[string]string{"DATABASE_URL": url}, "migrate", "up"); code != 0 {
		t.Fatalf("migrate up: %d %q", code, stderr)
	}
	var langs []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(t.name || ':' || d.language ORDER BY t.name) FROM search_docs d
		JOIN tools t ON t.id = d.tool_id WHERE t.name = 'wetter__weather' OR 'wettervorhersag' = ANY (d.lexemes)`).Scan(&langs); err != nil {
		t.Fatal(err)
	}
	if want := []string{"wetter__forecast:german", "wetter__weather:english"}; !slices.Equal(langs, want) {
		t.Fatalf("after migrate up: %v, want %v", langs, want)
	}
}
