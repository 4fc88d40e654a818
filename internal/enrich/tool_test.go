package enrich_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/enrich/enrichtest"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// openAIService is an enrichment service whose providers are the fake's.
func openAIService(pool *pgxpool.Pool, srv *httptest.Server, judge bool, retries int) *enrich.Service {
	pc := provider.Config{BaseURL: srv.URL + "/v1", Key: enrichtest.Key, Timeout: 5 * time.Second, Concurrency: 4,
		Retries: retries, BaseBackoff: time.Millisecond}
	return &enrich.Service{
		Pool:      pool,
		Logger:    slog.New(slog.DiscardHandler),
		Embedder:  embed.NewOpenAI(embed.OpenAIConfig{Provider: pc, Model: "text-embedding-test", Dims: 64, MaxBatch: 8}),
		Enricher:  enrich.NewLLM(llm.New(llm.Config{Provider: pc, Model: "gpt-test"}), judge),
		Questions: 3,
	}
}

func insertClient(t testing.TB, pool *pgxpool.Pool) *river.Client[pgx.Tx] {
	t.Helper()
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// importOne imports one demo tool, its enrich_tool job queued as production does, and
// returns its id and hash.
func importOne(t *testing.T, pool *pgxpool.Pool) (int64, string) {
	t.Helper()
	_, res := testfactory.Catalog(context.Background(), t, pool, "fin", dataset.Tools(dataset.DemoCompanies[:1])[:1],
		&testfactory.CatalogOpts{Queue: jobs.NewQueue(insertClient(t, pool))})
	if len(res.Changed) != 1 {
		t.Fatalf("changed %v", res.Changed)
	}
	tool, err := db.New(pool).GetToolByID(context.Background(), res.Changed[0])
	if err != nil {
		t.Fatal(err)
	}
	return tool.ID, tool.ContentHash
}

func countRows(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEnrichToolOpenAIIdempotent(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	f, srv := enrichtest.New(t)
	svc := openAIService(pool, srv, true, 2)
	id, hash := importOne(t, pool)

	// importing enqueued exactly one enrich_tool job, for the tool's hash
	if job := rivertest.RequireInserted(ctx, t, riverpgxv5.New(pool), &jobs.EnrichToolArgs{}, nil); job.Args.ToolID != id || job.Args.ContentHash != hash {
		t.Fatalf("enrich_tool job %+v, want tool %d with hash %s", job.Args, id, hash)
	}
	// queuing the same definition again adds a job (not unique: see jobs.EnrichToolArgs
	// InsertOpts), which the second run below shows costs no provider call
	params, err := jobs.EnrichJobsFor(ctx, db.New(pool), []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := insertClient(t, pool).InsertMany(ctx, params); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'enrich_tool'`); n != 2 {
		t.Fatalf("%d enrich_tool jobs after a second enqueue, want 2", n)
	}
	rep, err := svc.EnrichTool(ctx, id, hash)
	if err != nil {
		t.Fatal(err)
	}
	// profile + judge + questions + topics; components embedded in batches of 8
	if got := f.ChatCalls.Load(); got != 4 {
		t.Fatalf("chat calls %d, want 4", got)
	}
	if rep.Usage.PromptTokens != 400 || rep.Usage.CompletionTokens != 80 {
		t.Fatalf("usage %+v", rep.Usage)
	}
	if n := countRows(t, pool, `SELECT prompt_tokens FROM tool_enrichments WHERE tool_id = $1 AND step = 'profile'`, id); n != 200 {
		t.Fatalf("profile step prompt tokens %d, want 200 (generation + judgement)", n)
	}
	// name, description, 3 questions, topics, 5 profile fields, concat (no parameters)
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND embedding IS NOT NULL AND model = 'openai:text-embedding-test'`, id); n != 12 {
		t.Fatalf("%d embedded components, want 12", n)
	}
	if rep.Embedded != 12 || f.EmbedCalls.Load() != 2 {
		t.Fatalf("embedded %d in %d calls", rep.Embedded, f.EmbedCalls.Load())
	}
	// one vector per built-in profile
	if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE tool_id = $1`, id); n != 5 {
		t.Fatalf("%d tool vectors, want 5", n)
	}
	if n := countRows(t, pool, `SELECT vector_dims(embedding) FROM tool_vectors WHERE tool_id = $1 LIMIT 1`, id); n != 64 {
		t.Fatalf("vector dims %d", n)
	}

	// second run and an unchanged re-import: no provider call at all
	chat, emb := f.ChatCalls.Load(), f.EmbedCalls.Load()
	rep, err = svc.EnrichTool(ctx, id, hash)
	if err != nil {
		t.Fatal(err)
	}
	if f.ChatCalls.Load() != chat || f.EmbedCalls.Load() != emb || rep.Embedded != 0 || len(rep.Steps) != 0 {
		t.Fatalf("second run made calls: chat %d→%d embed %d→%d, report %+v", chat, f.ChatCalls.Load(), emb, f.EmbedCalls.Load(), rep)
	}
	_, res, err := sources.Import(ctx, pool, jobs.NewQueue(insertClient(t, pool)), "fin", dataset.Tools(dataset.DemoCompanies[:1])[:1])
	if err != nil || len(res.Changed) != 0 {
		t.Fatalf("re-import: %v %+v", err, res)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'enrich_tool'`); n != 2 {
		t.Fatalf("unchanged re-import queued jobs: %d", n-2)
	}

	// a stale job (superseded hash) does nothing
	rep, err = svc.EnrichTool(ctx, id, "old")
	if err != nil || rep.Skipped != "superseded" {
		t.Fatalf("stale job: %+v %v", rep, err)
	}
}

func TestEnrichToolRetriesRateLimit(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	f, srv := enrichtest.New(t)
	f.Fail("/v1/chat/completions", 429, 429)
	f.Fail("/v1/embeddings", 503)
	svc := openAIService(pool, srv, false, 3)
	id, hash := importOne(t, pool)
	if _, err := svc.EnrichTool(context.Background(), id, hash); err != nil {
		t.Fatal(err)
	}
	if got := f.ChatCalls.Load(); got != 5 {
		t.Fatalf("chat calls %d, want 3 + 2 retries", got)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1`, id); n != 12 {
		t.Fatalf("%d components", n)
	}
}

func TestEnrichToolProviderDownWritesNothing(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	f, srv := enrichtest.New(t)
	// the chat steps succeed, the embeddings endpoint fails every attempt
	f.Fail("/v1/embeddings", 500, 500, 500, 500, 500, 500)
	svc := openAIService(pool, srv, false, 2)
	// one batch, so that the attempts are countable (a failed batch cancels its siblings)
	svc.Embedder = embed.NewOpenAI(embed.OpenAIConfig{Provider: provider.Config{BaseURL: srv.URL + "/v1", Key: enrichtest.Key,
		Retries: 2, BaseBackoff: time.Millisecond}, Model: "text-embedding-test", Dims: 64, MaxBatch: 64})
	id, hash := importOne(t, pool)
	_, err := svc.EnrichTool(context.Background(), id, hash)
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 {
		t.Fatalf("want a 500 ProviderError, got %v", err)
	}
	if got := f.EmbedCalls.Load(); got != 3 {
		t.Fatalf("embedding calls %d, want 1 + 2 retries", got)
	}
	for _, table := range []string{"tool_components", "tool_enrichments", "tool_vectors"} {
		if n := countRows(t, pool, `SELECT count(*) FROM `+table+` WHERE tool_id = $1`, id); n != 0 {
			t.Fatalf("%d rows in %s after a failed job", n, table)
		}
	}
}

// A model's profile that cannot be repaired is asked for once more, then recorded as
// failed: the tool is stored with its other steps and components (so it has a vector) and
// the job ends. One that can be repaired is stored repaired, with notes.
func TestEnrichToolMalformedJSON(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	for _, tc := range []struct {
		answer string
		failed string // the recorded reason; "" when repaired
	}{
		{`{"tool_profile": {"function": "x", "tags": ["a"`, "not a JSON object"},                             // truncated
		{`{"tool_profile": {"tags": ["stock", "price", "quote"]}}`, "function is missing"},                   // no function
		{`{"profile": {"function": "Stock price.", "tags": ["a", "b", "c"]}}`, "tool_profile is missing"},    // wrong key
		{`Sure! Here is the profile: {"tool_profile": {}}`, "not a JSON object"},                             // prose
		{`{"tool_profile": {"function": "Stock price.", "tags": ["stock"]}}`, ""},                            // too few tags
		{`{"tool_profile": {"function": "` + strings.Repeat("word ", 60) + `", "tags": ["a","b","c"]}}`, ""}, // too long
	} {
		f, srv := enrichtest.New(t)
		f.ProfileAnswer(tc.answer)
		svc := openAIService(pool, srv, false, 0)
		id, hash := importOneNamed(t, pool)
		rep, err := svc.EnrichTool(ctx, id, hash)
		if err != nil {
			t.Fatalf("%s: %v", tc.answer, err)
		}
		var stored string
		if err := pool.QueryRow(ctx, `SELECT output::text FROM tool_enrichments WHERE tool_id = $1 AND step = 'profile'`, id).Scan(&stored); err != nil {
			t.Fatalf("%s: %v", tc.answer, err)
		}
		if tc.failed != "" {
			// asked twice (profile), then questions and topics once each
			if len(rep.Failed) != 1 || rep.Failed[0].Step != enrich.StepProfile || !strings.Contains(rep.Failed[0].Reason, tc.failed) ||
				!strings.Contains(stored, `"failed"`) || f.ChatCalls.Load() != 4 {
				t.Fatalf("%s: failed %+v, stored %s, %d chat calls", tc.answer, rep.Failed, stored, f.ChatCalls.Load())
			}
		} else if len(rep.Failed) != 0 || !strings.Contains(stored, `"notes"`) {
			t.Fatalf("%s: failed %+v, stored %s; want it repaired with notes", tc.answer, rep.Failed, stored)
		}
		if n := countRows(t, pool, `SELECT count(*) FROM tool_enrichments WHERE tool_id = $1`, id); n != 3 {
			t.Fatalf("%s: %d steps stored, want 3", tc.answer, n)
		}
		if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE tool_id = $1`, id); n == 0 {
			t.Fatalf("%s: no vector", tc.answer)
		}
		// Enriching the same content again asks nothing: the failure is on record.
		before := f.ChatCalls.Load()
		if _, err := svc.EnrichTool(ctx, id, hash); err != nil || f.ChatCalls.Load() != before {
			t.Fatalf("%s: again: %v, %d more chat calls", tc.answer, err, f.ChatCalls.Load()-before)
		}
	}
}

var toolSeq atomic.Int64

// importOneNamed imports a fresh single-tool source.
func importOneNamed(t *testing.T, pool *pgxpool.Pool) (int64, string) {
	t.Helper()
	// a number, not a growing run of letters: -count=10 makes hundreds of sources, and a
	// source name has at most 32 characters
	name := fmt.Sprintf("src%d", toolSeq.Add(1))
	_, res := testfactory.Catalog(context.Background(), t, pool, name,
		[]catalog.Tool{{Name: "get_price", Description: "Returns the latest stock price."}}, nil)
	var hash string
	if err := pool.QueryRow(context.Background(), `SELECT content_hash FROM tools WHERE id = $1`, res.Changed[0]).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	return res.Changed[0], hash
}

func TestEnrichToolJudgeFailKeepsOriginal(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	f, srv := enrichtest.New(t)
	f.Judge(false, false)
	svc := openAIService(pool, srv, true, 0)
	id, hash := importOne(t, pool)
	if _, err := svc.EnrichTool(context.Background(), id, hash); err != nil {
		t.Fatal(err)
	}
	// generate, judge, regenerate, judge; then questions and topics
	if got := f.ChatCalls.Load(); got != 6 {
		t.Fatalf("chat calls %d, want 6", got)
	}
	var out string
	if err := pool.QueryRow(context.Background(), `SELECT output::text FROM tool_enrichments WHERE tool_id = $1 AND step = 'profile'`, id).Scan(&out); err != nil {
		t.Fatal(err)
	}
	if out != `{"tool_profile": null}` {
		t.Fatalf("profile output %s", out)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind LIKE 'profile_%'`, id); n != 0 {
		t.Fatalf("%d profile components kept after a failed judgement", n)
	}

	// judged consistent on the regeneration: the second profile is kept
	pool2 := pgtest.NewPool(t)
	f2, srv2 := enrichtest.New(t)
	f2.Judge(false, true)
	id2, hash2 := importOne(t, pool2)
	if _, err := openAIService(pool2, srv2, true, 0).EnrichTool(context.Background(), id2, hash2); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool2, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind LIKE 'profile_%'`, id2); n != 5 {
		t.Fatalf("%d profile components, want 5", n)
	}
}

// TestEnrichToolFencedJSON: a profile wrapped in a Markdown fence, however the fence is
// tagged, is read like the bare JSON.
func TestEnrichToolFencedJSON(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	profile := `{"tool_profile": {"function": "Returns the latest price of a stock.", "tags": ["stock", "price", "quote"]}}`
	for _, answer := range []string{"```json\n" + profile + "\n```", "```JSON\n" + profile + "\n```", "```\n" + profile + "\n```"} {
		f, srv := enrichtest.New(t)
		f.ProfileAnswer(answer)
		id, hash := importOneNamed(t, pool)
		if _, err := openAIService(pool, srv, false, 0).EnrichTool(ctx, id, hash); err != nil {
			t.Fatalf("%q: %v", answer, err)
		}
		if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind = 'profile_function'`, id); n != 1 {
			t.Errorf("%q: %d profile_function components, want 1", answer, n)
		}
	}
}

// TestEnrichToolDropsStaleComponents: components the new enrichment no longer makes (here
// questions past the new number asked for) are deleted, by their (kind, ordinal) key; the
// others are kept.
func TestEnrichToolDropsStaleComponents(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	id, hash := importOne(t, pool)
	svc := func(questions int) *enrich.Service {
		return &enrich.Service{Pool: pool, Logger: slog.New(slog.DiscardHandler), Embedder: embed.NewLocal(64),
			Enricher: enrich.Heuristic{}, Questions: questions}
	}
	if _, err := svc(5).EnrichTool(ctx, id, hash); err != nil {
		t.Fatal(err)
	}
	before := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind <> 'question'`, id)
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind = 'question'`, id); n != 5 {
		t.Fatalf("%d questions, want 5", n)
	}
	if _, err := svc(2).EnrichTool(ctx, id, hash); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind = 'question' AND ordinal < 2`, id); n != 2 {
		t.Errorf("%d of the 2 questions kept", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind = 'question' AND ordinal >= 2`, id); n != 0 {
		t.Errorf("%d stale questions left", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind <> 'question'`, id); n != before {
		t.Errorf("%d other components, want the %d of before", n, before)
	}
}

// importTool imports a fresh single-tool source holding tool.
func importTool(t *testing.T, pool *pgxpool.Pool, tool catalog.Tool) (int64, string) {
	t.Helper()
	name := fmt.Sprintf("src%d", toolSeq.Add(1))
	_, res := testfactory.Catalog(context.Background(), t, pool, name, []catalog.Tool{tool}, nil)
	var hash string
	if err := pool.QueryRow(context.Background(), `SELECT content_hash FROM tools WHERE id = $1`, res.Changed[0]).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	return res.Changed[0], hash
}

// TestEnrichToolHeuristicCJK: tools whose descriptions use only full-width punctuation,
// longer than the question limit, are enriched by the heuristic enricher, every stored
// question within 300 characters and valid UTF-8.
func TestEnrichToolHeuristicCJK(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	svc := &enrich.Service{Pool: pool, Logger: slog.New(slog.DiscardHandler), Embedder: embed.NewLocal(64),
		Enricher: enrich.Heuristic{}, Questions: 10}
	for _, desc := range []string{
		"通过车站的 station_telecode 查询车站的详细信息。支持按城市筛选，返回车站名称、拼音、电报码等信息，适用于查询火车票前获取车站代码。",
		"駅の電報コードから駅の詳細情報を取得します。都市で絞り込み、駅名・読み仮名・電報コードなどを返します。",
	} {
		id, hash := importTool(t, pool, catalog.Tool{Name: "get_station_by_telecode", Description: strings.Repeat(desc, 8)})
		rep, err := svc.EnrichTool(ctx, id, hash)
		if err != nil {
			t.Fatalf("%.20s: %v", desc, err)
		}
		if rep.Vectors == 0 {
			t.Fatalf("%.20s: no vectors", desc)
		}
		rows, err := pool.Query(ctx, `SELECT text FROM tool_components WHERE tool_id = $1 AND kind = 'question'`, id)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(qs) == 0 {
			t.Fatalf("%.20s: questions %v %v", desc, qs, err)
		}
		for _, q := range qs {
			if !utf8.ValidString(q) || utf8.RuneCountInString(q) > 300 {
				t.Fatalf("%.20s: stored question %q", desc, q)
			}
		}
	}
}

// TestEnrichToolRepairsLLMQuestions: an LLM answering one over-long question among good
// ones costs that question only: the good ones are stored, the long one cut to the limit,
// and the repair noted in the stored output.
func TestEnrichToolRepairsLLMQuestions(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	f, srv := enrichtest.New(t)
	f.QuestionsAnswer(`{"questions": ["What is Apple trading at?", "` + strings.Repeat("价格", 200) + `", "apple share price now"]}`)
	svc := openAIService(pool, srv, false, 0)
	id, hash := importOneNamed(t, pool)
	if _, err := svc.EnrichTool(ctx, id, hash); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Questions []string `json:"questions"`
		Notes     []string `json:"notes"`
	}
	if err := pool.QueryRow(ctx, `SELECT output FROM tool_enrichments WHERE tool_id = $1 AND step = 'questions'`, id).Scan(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Questions) != 3 || out.Questions[0] != "What is Apple trading at?" || out.Questions[2] != "apple share price now" {
		t.Fatalf("stored questions %q", out.Questions)
	}
	if n := utf8.RuneCountInString(out.Questions[1]); n != 300 {
		t.Fatalf("long question stored with %d characters", n)
	}
	if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "cut to 300 characters") {
		t.Fatalf("notes %q", out.Notes)
	}
}
