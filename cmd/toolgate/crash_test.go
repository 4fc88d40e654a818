//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/vectors"
)

// TestKilledServeResumesItsWork: `toolgate serve` is killed with SIGKILL while it enriches a
// catalog (its LLM provider holds the calls), re-weights a profile (held on a row lock) and
// syncs a stdio MCP server (which holds tools/list and would outlive the end of its stdin).
// The server does not outlive toolgate. A second `serve` on the same database, with the job
// timeouts and the rescue threshold in seconds, finishes all of it: every tool enriched, the
// re-weighted set ready and current, the source synced, and the jobs that were running when
// the process died retried by River's rescuer.
func TestKilledServeResumesItsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	ctx := context.Background()
	dbURL := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	llm := newHeldLLM(t)
	stdio := mcptest.NewStdio(t, []catalog.Tool{
		{Name: "get_forecast", Description: "Weather forecast for a city.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "get_alerts", Description: "Active weather alerts for a region.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "get_history", Description: "Past weather observations for a city.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}, mcptest.Held, 0)
	t.Cleanup(stdio.Release) // a server the test failed to see killed then exits
	addr := freeAddr(t)
	base := "http://" + addr
	settings := []string{
		"DATABASE_URL=" + dbURL, "LISTEN_ADDR=" + addr, "TOOLGATE_OPEN=true", "TOOLGATE_LOG_FORMAT=text",
		"TOOLGATE_WORKERS=10", "TOOLGATE_SHUTDOWN_TIMEOUT=5s",
		"TOOLGATE_ENRICHER=openai", "TOOLGATE_LLM_URL=" + llm.URL + "/v1", "TOOLGATE_LLM_KEY=sk-test",
		"TOOLGATE_LLM_MODEL=fake-chat", "TOOLGATE_LLM_CONCURRENCY=16", "TOOLGATE_QUESTIONS=3",
		// Timeouts a held job outlives until the kill, and a rescue threshold above them.
		"TOOLGATE_ENRICH_TIMEOUT=6s", "TOOLGATE_REWEIGHT_TIMEOUT=6s", "TOOLGATE_SYNC_TIMEOUT=6s",
		"TOOLGATE_JOB_TIMEOUT=2s", "TOOLGATE_RESCUE_AFTER=9s",
		"TOOLGATE_STDIO_COMMANDS=" + stdio.Config().Command + " env=" + strings.Join(mcptest.EnvNames, ":"), // the test binary, serving MCP
	}
	first := startServe(t, settings, "first")
	waitFor(t, "the first serve to be ready", 60*time.Second, func() bool { return ready(base) })

	// The re-weight: its building set is made first (as an interrupted run leaves one, which
	// the re-weight then resumes) and locked, so that the job waits on it from its first write.
	var setID int64
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		set, err := profiles.BeginReweight(ctx, tx, "default")
		setID = set.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	lock, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback(ctx) }()
	if _, err := lock.Exec(ctx, `SELECT 1 FROM vector_sets WHERE id = $1 FOR NO KEY UPDATE`, setID); err != nil {
		t.Fatal(err)
	}
	var start profiles.ReweightStart
	call(t, http.MethodPost, base+"/admin/profiles/default/reweight", "", http.StatusAccepted, &start)
	if start.SetID != setID || start.Duplicate {
		t.Fatalf("re-weight %+v, want a new job building set %d", start, setID)
	}

	// The sync of a stdio source, queued before the catalog, whose enrichments would take
	// every worker. The server does not exit when its stdin ends while it holds the listing.
	cfg := stdio.Config()
	source, _ := json.Marshal(map[string]any{"name": "weather", "kind": "mcp_stdio", "command": cfg.Command,
		"env": cfg.Env, "interval": "off"})
	call(t, http.MethodPost, base+"/v1/sources", string(source), http.StatusCreated, nil)

	// The enrichment of a 20-tool catalog; every LLM call is held.
	var catalogLines strings.Builder
	for i := range 20 {
		fmt.Fprintf(&catalogLines, `{"name":"quote_%02d","description":"Latest stock quote number %d of a listed company"}`+"\n", i, i)
	}
	call(t, http.MethodPut, base+"/v1/sources/market/tools", catalogLines.String(), http.StatusOK, nil)

	running := func(kind string) int {
		return count(t, pool, `SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'running'`, kind)
	}
	var children []int
	waitFor(t, "every kind of job to be mid-flight", 20*time.Second, func() bool {
		children = mcptest.Descendants(first.Process.Pid)
		return running("reweight") == 1 && running("sync_source") == 1 && running("enrich_tool") >= 5 &&
			llm.held.Load() >= 5 && len(children) == 1 &&
			count(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) > 0
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	killed := time.Now()
	heldEnrichments := running("enrich_tool") // what the dead process left, as River's rescuer will see it
	waitFor(t, fmt.Sprintf("the stdio server (pid %v) to die with toolgate", children), 10*time.Second, func() bool {
		for _, pid := range children {
			if mcptest.Alive(pid) {
				return false
			}
		}
		return true
	})
	t.Logf("killed mid-flight: 1 re-weight, 1 sync, %d enrichments; the stdio server gone %v after the kill",
		heldEnrichments, time.Since(killed).Round(time.Millisecond))

	// The providers recover and the lock goes; the dead process's jobs are still running.
	llm.release()
	stdio.Release()
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if running("reweight") != 1 || running("sync_source") != 1 || running("enrich_tool") != heldEnrichments {
		t.Fatal("the killed process's jobs are no longer running before any restart")
	}

	second := startServe(t, settings, "second")
	waitFor(t, "the restarted serve to finish the killed process's work", 90*time.Second, func() bool {
		return count(t, pool, `SELECT count(*) FROM river_job WHERE kind IN ('enrich_tool', 'reweight', 'sync_source')
			AND state NOT IN ('completed', 'cancelled', 'discarded')`) == 0
	})
	t.Logf("all work finished %v after the kill", time.Since(killed).Round(time.Second))

	if n := count(t, pool, `SELECT count(*) FROM river_job WHERE kind IN ('enrich_tool', 'reweight', 'sync_source') AND state <> 'completed'`); n != 0 {
		t.Errorf("%d jobs ended other than completed", n)
	}
	// The jobs the kill interrupted were given back by River's rescuer, not started anew.
	if n := count(t, pool, `SELECT count(*) FROM river_job WHERE kind IN ('enrich_tool', 'reweight', 'sync_source')
		AND errors[1]->>'error' = 'Stuck job rescued by JobRescuer'`); n != heldEnrichments+2 {
		t.Errorf("%d jobs rescued, want the %d running at the kill", n, heldEnrichments+2)
	}
	if n := count(t, pool, `SELECT count(*) FROM tools`); n != 23 {
		t.Errorf("%d tools, want the 20 of the catalog and the 3 synced", n)
	}
	// Questions come only from the (fake) LLM: every tool went through the LLM enrichment.
	if n := count(t, pool, `SELECT count(*) FROM tools t WHERE NOT EXISTS
		(SELECT 1 FROM tool_components c WHERE c.tool_id = t.id AND c.kind = 'question')`); n != 0 {
		t.Errorf("%d tools without LLM questions", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM weight_profiles p JOIN vector_sets s ON s.id = p.current_set
		WHERE p.name = 'default' AND s.id = $1 AND s.state = 'ready'`, setID); n != 1 {
		t.Errorf("the re-weighted set %d is not the default profile's ready current set", setID)
	}
	if n := count(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, setID); n != 23 {
		t.Errorf("the re-weighted set holds %d vectors, want one per tool (23)", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM sync_runs r JOIN sources s ON s.id = r.source_id
		WHERE s.name = 'weather' AND r.state = 'succeeded' AND r.created = 3`); n != 1 {
		t.Errorf("%d successful syncs creating the 3 tools, want 1", n)
	}

	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.Wait(); err != nil {
		t.Errorf("the second serve stopped with %v", err)
	}
}

// TestKilledServeFinishesDeferredIndexes: `toolgate serve` is killed with SIGKILL while its
// vector_index job, after the enrichment of a new catalog, builds the deferred HNSW indexes
// of the profiles that are not active: the first sets are built, the last one's build waits
// on a lock the test holds. A second `serve` on the same database (its rescuer retries the
// dead process's job) builds the rest; every set holds every tool's vector throughout, and
// every set ends with its index.
func TestKilledServeFinishesDeferredIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	ctx := context.Background()
	dbURL := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}

	addr := freeAddr(t)
	base := "http://" + addr
	settings := []string{
		"DATABASE_URL=" + dbURL, "LISTEN_ADDR=" + addr, "TOOLGATE_OPEN=true", "TOOLGATE_LOG_FORMAT=text",
		"TOOLGATE_WORKERS=4", "TOOLGATE_SHUTDOWN_TIMEOUT=5s", "TOOLGATE_QUESTIONS=3",
		// A timeout the held build outlives until the kill, and a rescue threshold above it.
		"TOOLGATE_ENRICH_TIMEOUT=6s", "TOOLGATE_REWEIGHT_TIMEOUT=6s", "TOOLGATE_SYNC_TIMEOUT=6s",
		"TOOLGATE_JOB_TIMEOUT=2s", "TOOLGATE_RESCUE_AFTER=9s",
	}
	first := startServe(t, settings, "first")
	waitFor(t, "the first serve to be ready", 60*time.Second, func() bool { return ready(base) })
	// The profiles' first sets, as the first enrichment makes them; the last deferred one's
	// partition is locked against the index build (CREATE INDEX waits for ROW EXCLUSIVE,
	// the enrichment's own inserts do not).
	if err := vectors.EnsureCurrentSets(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := pool.QueryRow(ctx, `SELECT max(id) FROM vector_sets WHERE index_deferred`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	lock, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback(ctx) }()
	if _, err := lock.Exec(ctx, fmt.Sprintf(`LOCK TABLE tool_vectors_s%d IN ROW EXCLUSIVE MODE`, last)); err != nil {
		t.Fatal(err)
	}
	const tools = 20
	var catalogLines strings.Builder
	for i := range tools {
		fmt.Fprintf(&catalogLines, `{"name":"quote_%02d","description":"Latest stock quote number %d of a listed company"}`+"\n", i, i)
	}
	call(t, http.MethodPut, base+"/v1/sources/market/tools", catalogLines.String(), http.StatusOK, nil)

	deferred := func() int { return count(t, pool, `SELECT count(*) FROM vector_sets WHERE index_deferred`) }
	waitFor(t, "the index build to be held on its last set", 60*time.Second, func() bool {
		return count(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'enrich_tool' AND state <> 'completed'`) == 0 &&
			count(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'vector_index' AND state = 'running'`) == 1 &&
			deferred() == 1 &&
			count(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) > 0
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	// The dead process's backend would finish the statement once the lock goes (PostgreSQL
	// notices a vanished client only when it next talks to it); a host that died takes its
	// statements with it, which terminating the backend stands in for.
	if n := count(t, pool, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%index_deferred%') x`); n != 1 {
		t.Fatalf("%d index builds terminated, want 1", n)
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// Nothing is lost: the unbuilt set already holds every vector.
	if n := count(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, last); n != tools {
		t.Fatalf("the set whose build was killed holds %d vectors, want %d", n, tools)
	}

	second := startServe(t, settings, "second")
	waitFor(t, "the restarted serve to build the last index", 90*time.Second, func() bool { return deferred() == 0 })
	waitFor(t, "the restarted serve to be ready", 60*time.Second, func() bool { return ready(base) })
	if n := count(t, pool, `SELECT count(*) FROM vector_sets s WHERE s.state = 'ready' AND NOT EXISTS (SELECT 1 FROM pg_indexes i
		WHERE i.tablename = toolgate_vector_partition(s.id) AND i.indexdef LIKE '%USING hnsw%')`); n != 0 {
		t.Errorf("%d ready sets without their HNSW index", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM vector_sets s WHERE s.state = 'ready'
		AND (SELECT count(*) FROM tool_vectors v WHERE v.set_id = s.id) <> $1`, tools); n != 0 {
		t.Errorf("%d ready sets without a vector for each of the %d tools", n, tools)
	}
	if n := count(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'vector_index'
		AND errors[1]->>'error' = 'Stuck job rescued by JobRescuer'`); n != 1 {
		t.Errorf("%d vector_index jobs rescued, want the one running at the kill", n)
	}
	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.Wait(); err != nil {
		t.Errorf("the second serve stopped with %v", err)
	}
}

// startServe runs `toolgate serve` as a process of its own (the test binary acting as
// toolgate), logging to a file shown if the test fails. It is killed at the end of the test
// if still running.
func startServe(t *testing.T, settings []string, name string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), settings...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			if len(out) > 8000 {
				out = out[len(out)-8000:]
			}
			t.Logf("%s serve's log (end):\n%s", name, out)
		}
	})
	return cmd
}

func ready(base string) bool {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// call makes an API request, checks its status and decodes the answer into out (if not nil).
func call(t *testing.T, method, url, body string, status int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, buf.String(), status)
	}
	if out != nil {
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, buf.String())
		}
	}
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond every 100 ms until it holds, failing the test after limit (a bound on
// a hang, not a timing assertion).
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
	}
}

// heldLLM is an OpenAI-compatible chat completions server that holds every call until
// release, then answers each enrichment step at once.
type heldLLM struct {
	*httptest.Server
	held     atomic.Int32 // calls waiting now
	released chan struct{}
}

func newHeldLLM(t *testing.T) *heldLLM {
	l := &heldLLM{released: make(chan struct{})}
	l.Server = httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(l.Close)
	t.Cleanup(l.release) // before Close: a held call would keep Close waiting
	return l
}

func (l *heldLLM) release() {
	select {
	case <-l.released:
	default:
		close(l.released)
	}
}

func (l *heldLLM) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	l.held.Add(1)
	select {
	case <-l.released:
	case <-r.Context().Done(): // the caller died
	}
	l.held.Add(-1)
	if r.Context().Err() != nil {
		return
	}
	var content string
	switch sys := req.Messages[0].Content; {
	case strings.Contains(sys, `"tool_profile"`):
		content = `{"tool_profile": {"function": "Returns the latest stock quote of a company.", "tags": ["stock", "quote", "price"], "when_to_use": "When asked for a current share price."}}`
	case strings.Contains(sys, "requests that real users"):
		content = `{"questions": ["What is Apple trading at?", "apple share price now", "How much is one AAPL share?"]}`
	case strings.Contains(sys, "key topics"):
		content = `{"topics": ["stock quote", "share price"]}`
	default:
		http.Error(w, `{"error":{"message":"unexpected prompt"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "fake-chat",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": content}}},
		"usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}
