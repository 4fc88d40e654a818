package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// EnrichToolArgs enriches and embeds one tool definition: the Tool-DE profile, the
// synthetic questions and the key topics (each reused when already produced for this
// content hash by this model), then the embedding of every changed component, then the
// tool's vector in every writable vector set.
type EnrichToolArgs struct {
	ToolID      int64  `json:"tool_id"`
	ContentHash string `json:"content_hash"`
}

func (EnrichToolArgs) Kind() string { return "enrich_tool" }

// InsertOpts: enrich_tool jobs are not unique. Catalog writes queue them only for tools
// whose definition changed, so duplicates are rare (a definition that comes back while its
// earlier job still waits, `toolgate reembed`), and a duplicate finds its work done and
// makes no provider call. A unique job would be worse: River inserts a batch of unique jobs
// with ON CONFLICT DO UPDATE, locking every existing job of the same key, and a catalog
// transaction holding those locks while River's completer, holding others, updates the
// same jobs deadlocked (40P01 in TestConcurrentWritersNeverDeadlock).
func (EnrichToolArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 10}
}

// EnrichToolWorker works EnrichToolArgs.
type EnrichToolWorker struct {
	river.WorkerDefaults[EnrichToolArgs]
	deps Deps
}

// DefaultEnrichTimeout bounds one tool's provider calls and writes (TOOLGATE_ENRICH_TIMEOUT).
const DefaultEnrichTimeout = 5 * time.Minute

// Timeout bounds one tool's provider calls and writes.
func (w *EnrichToolWorker) Timeout(*river.Job[EnrichToolArgs]) time.Duration {
	return w.deps.enrichTimeout()
}

// Work makes no provider call for an unchanged tool whose outputs and embeddings exist.
// The tool's enriched fields reach the lexical index with the next debounced lexical_index
// run, a moment later (at once when the worker runs outside a River client).
func (w *EnrichToolWorker) Work(ctx context.Context, job *river.Job[EnrichToolArgs]) error {
	rep, err := EnrichTool(ctx, w.deps, job.Args)
	if err != nil || rep.Skipped != "" {
		return err
	}
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		_, err = lexical.Flush(ctx, w.deps.Pool)
		return err
	}
	return w.deps.enqueueLexicalIndex(ctx, rc)
}

// EnrichReport is what one run of EnrichTool did.
type EnrichReport struct {
	Skipped  string // why nothing was done: "deleted", "superseded"; empty otherwise
	Steps    []string
	Embedded int // components embedded by the provider
	Vectors  int // tool vectors written
	Usage    enrich.Usage
}

type stepOutput struct {
	output json.RawMessage
	usage  enrich.Usage
}

// questionsOutput is the stored output of the questions step; N is part of the key,
// because asking for a different number of questions is a different product.
type questionsOutput struct {
	N         int      `json:"n"`
	Questions []string `json:"questions"`
}

type profileOutput struct {
	// Profile is null when the generated profile failed its faithfulness judgement twice and
	// only the original document is kept.
	Profile *enrich.Profile `json:"tool_profile"`
}

type topicsOutput struct {
	Topics []string `json:"topics"`
}

// EnrichTool runs the enrichment of one tool definition; the worker's body, exported for
// the CLI and benchmarks. Provider calls happen before the write transaction; the writes
// (outputs, components, vectors) commit together or not at all.
func EnrichTool(ctx context.Context, deps Deps, args EnrichToolArgs) (EnrichReport, error) {
	var rep EnrichReport
	if deps.Embedder == nil || deps.Enricher == nil {
		return rep, errors.New("enrich_tool: no embedder or enricher configured in this process")
	}
	q := db.New(deps.Pool)
	tool, err := q.GetToolByID(ctx, args.ToolID)
	if errors.Is(err, pgx.ErrNoRows) {
		rep.Skipped = "deleted"
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	if tool.ContentHash != args.ContentHash {
		// The definition changed again; the job queued for the new hash does the work.
		rep.Skipped = "superseded"
		return rep, nil
	}
	if err := deps.ensureSpace(ctx); err != nil {
		return rep, err
	}
	title := ""
	if tool.Title != nil {
		title = *tool.Title
	}
	doc := enrich.NewDocument(tool.OriginalName, title, tool.Description, tool.InputSchema)

	stored, err := q.ListToolEnrichments(ctx, tool.ID)
	if err != nil {
		return rep, err
	}
	have := map[string]json.RawMessage{}
	model := deps.Enricher.Model()
	for _, e := range stored {
		if e.ContentHash == tool.ContentHash && e.Model == model {
			have[e.Step] = e.Output
		}
	}
	var out enrich.Outputs
	produced := map[string]stepOutput{}
	// profile
	var po profileOutput
	if raw, ok := have[enrich.StepProfile]; ok && json.Unmarshal(raw, &po) == nil {
		out.Profile = po.Profile
	} else {
		p, u, err := deps.Enricher.Profile(ctx, doc)
		rep.Usage = rep.Usage.Add(u)
		if err != nil {
			return rep, err
		}
		out.Profile = p
		produced[enrich.StepProfile] = stepOutput{mustJSON(profileOutput{Profile: p}), u}
	}
	// questions
	var qo questionsOutput
	if raw, ok := have[enrich.StepQuestions]; ok && json.Unmarshal(raw, &qo) == nil && qo.N == deps.Questions {
		out.Questions = qo.Questions
	} else {
		qs, u, err := deps.Enricher.Questions(ctx, doc, deps.Questions)
		rep.Usage = rep.Usage.Add(u)
		if err != nil {
			return rep, err
		}
		out.Questions = qs
		produced[enrich.StepQuestions] = stepOutput{mustJSON(questionsOutput{N: deps.Questions, Questions: qs}), u}
	}
	// topics
	var to topicsOutput
	if raw, ok := have[enrich.StepTopics]; ok && json.Unmarshal(raw, &to) == nil {
		out.Topics = to.Topics
	} else {
		ts, u, err := deps.Enricher.Topics(ctx, doc)
		rep.Usage = rep.Usage.Add(u)
		if err != nil {
			return rep, err
		}
		out.Topics = ts
		produced[enrich.StepTopics] = stepOutput{mustJSON(topicsOutput{Topics: ts}), u}
	}

	// Embed only the components whose text changed or that lack a vector of this space.
	comps := enrich.Components(doc, out)
	old, err := q.ListToolComponents(ctx, tool.ID)
	if err != nil {
		return rep, err
	}
	emodel := deps.Embedder.Model()
	oldByKey := map[string]db.ToolComponent{}
	for _, c := range old {
		oldByKey[fmt.Sprintf("%s:%d", c.Kind, c.Ordinal)] = c
	}
	vectors := make([][]float32, len(comps))
	var texts []string
	var missing []int
	for i, c := range comps {
		o, ok := oldByKey[c.Key()]
		if ok && o.TextHash == c.Hash() && o.Embedding != nil && o.Model != nil && *o.Model == emodel && len(o.Embedding.Slice()) == deps.Embedder.Dims() {
			vectors[i] = o.Embedding.Slice()
			continue
		}
		texts = append(texts, c.Text)
		missing = append(missing, i)
	}
	if len(texts) > 0 {
		vs, err := deps.Embedder.Embed(ctx, texts)
		if err != nil {
			return rep, err
		}
		if len(vs) != len(texts) {
			return rep, fmt.Errorf("embedder returned %d vectors for %d texts", len(vs), len(texts))
		}
		for j, i := range missing {
			vectors[i] = vs[j]
		}
		rep.Embedded = len(texts)
	}

	if err := ensureCurrentSets(ctx, deps); err != nil {
		return rep, err
	}
	err = pgx.BeginFunc(ctx, deps.Pool, func(tx pgx.Tx) error {
		// Not waiting for this commit's WAL flush is safe: River marks the job completed
		// afterwards with a synchronous commit, which flushes this one's WAL too; a crash in
		// between leaves the job running, and River runs it again.
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		if err := embed.CheckSpace(ctx, tx, deps.Embedder); err != nil {
			return err
		}
		q := db.New(tx)
		hash, err := q.LockToolHash(ctx, tool.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			rep.Skipped = "deleted"
			return nil
		}
		if err != nil {
			return err
		}
		if hash != args.ContentHash {
			rep.Skipped = "superseded"
			return nil
		}
		for step, so := range produced {
			if err := q.UpsertToolEnrichment(ctx, db.UpsertToolEnrichmentParams{
				ToolID: tool.ID, Step: step, ContentHash: tool.ContentHash, Model: model, Output: so.output,
				PromptTokens: int32(so.usage.PromptTokens), CompletionTokens: int32(so.usage.CompletionTokens),
			}); err != nil {
				return err
			}
			rep.Steps = append(rep.Steps, step)
		}
		keep := make([]string, len(comps))
		params := db.UpsertToolComponentsParams{ToolID: tool.ID, Model: emodel,
			Kinds: make([]string, len(comps)), Ordinals: make([]int32, len(comps)), Texts: make([]string, len(comps)),
			TextHashes: make([]string, len(comps)), Embeddings: make([]string, len(comps))}
		tc := make([]tdwa.Component, len(comps))
		for i, c := range comps {
			keep[i] = c.Key()
			params.Kinds[i], params.Ordinals[i], params.Texts[i] = c.Kind, int32(c.Ordinal), c.Text
			params.TextHashes[i], params.Embeddings[i] = c.Hash(), pgvector.NewVector(vectors[i]).String()
			tc[i] = tdwa.Component{Kind: c.Kind, Ordinal: c.Ordinal, Vector: vectors[i]}
		}
		sets, err := q.ListWritableVectorSets(ctx)
		if err != nil {
			return err
		}
		var vp []db.UpsertToolVectorParams
		for _, s := range sets {
			prof, err := tdwa.ParseProfile(s.Strategy, s.Weights)
			if err != nil {
				return fmt.Errorf("weight profile %s: %w", s.Profile, err)
			}
			v, err := tdwa.Combine(tc, prof)
			var nc *tdwa.NoComponentsError
			if errors.As(err, &nc) {
				// The tool has none of the kinds this profile weighs: it has no vector there.
				continue
			}
			if err != nil {
				return fmt.Errorf("weight profile %s: %w", s.Profile, err)
			}
			vp = append(vp, db.UpsertToolVectorParams{SetID: s.SetID, ToolID: tool.ID, Embedding: pgvector.NewVector(v)})
		}
		rep.Vectors = len(vp)
		if err := execBatch(q.UpsertToolVector(ctx, vp)); err != nil {
			return fmt.Errorf("write tool vectors: %w", err)
		}
		// The components last (lock order, internal/postgres/locks.go: components before
		// vector rows would be as good, but the vector upserts are the slow part and hold
		// no lock another writer of this tool needs).
		if err := q.DeleteStaleToolComponents(ctx, db.DeleteStaleToolComponentsParams{ToolID: tool.ID, Keep: keep}); err != nil {
			return err
		}
		if err := q.UpsertToolComponents(ctx, params); err != nil {
			return fmt.Errorf("write components: %w", err)
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	if rep.Skipped == "" && deps.Logger != nil {
		deps.Logger.Debug("tool enriched", "tool", tool.Name, "steps", rep.Steps, "embedded", rep.Embedded,
			"vectors", rep.Vectors, "prompt_tokens", rep.Usage.PromptTokens, "completion_tokens", rep.Usage.CompletionTokens)
	}
	return rep, nil
}

// batchExecer is the result of a sqlc :batchexec query.
type batchExecer interface {
	Exec(func(int, error))
	Close() error
}

func execBatch(b batchExecer) error {
	var first error
	b.Exec(func(_ int, err error) {
		if err != nil && first == nil {
			first = err
		}
	})
	return errors.Join(first, b.Close())
}

// ensureCurrentSets gives every profile without a current vector set a new ready one while
// the catalog has no embedded tool yet, so that the first enrichments have somewhere to go
// (the sets then fill as the catalog is enriched). A profile made later, over an embedded
// catalog, waits for its re-weight: a set started by the next enrichment would hold only
// the tools enriched from then on, and could be activated half empty. Concurrent callers
// serialize on the profile rows and the later ones find the sets made.
func ensureCurrentSets(ctx context.Context, deps Deps) error {
	return pgx.BeginFunc(ctx, deps.Pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		ids, err := q.LockProfilesWithoutSet(ctx)
		if err != nil || len(ids) == 0 {
			return err
		}
		embedded, err := q.CatalogHasEmbeddings(ctx)
		if err != nil || embedded {
			return err
		}
		for _, id := range ids {
			set, err := q.CreateVectorSet(ctx, db.CreateVectorSetParams{ProfileID: id, State: "ready"})
			if err != nil {
				return err
			}
			if err := q.SetProfileCurrentSet(ctx, db.SetProfileCurrentSetParams{ID: id, CurrentSet: pgtype.Int8{Int64: set, Valid: true}}); err != nil {
				return err
			}
		}
		return nil
	})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs of strings are marshalled here
	}
	return b
}

// EnrichJobsFor builds the enrich_tool jobs for the given tools' current definitions.
func EnrichJobsFor(ctx context.Context, q *db.Queries, toolIDs []int64) ([]river.InsertManyParams, error) {
	rows, err := q.ListToolHashesByID(ctx, toolIDs)
	if err != nil {
		return nil, err
	}
	params := make([]river.InsertManyParams, len(rows))
	for i, r := range rows {
		params[i] = river.InsertManyParams{Args: EnrichToolArgs{ToolID: r.ID, ContentHash: r.ContentHash}}
	}
	return params, nil
}

// spaceCheck checks the stored embedding space against the process's embedder once per
// process; a mismatch is checked again on every job, so fixing it needs no restart.
type spaceCheck struct {
	mu sync.Mutex
	ok bool
}

func (d Deps) ensureSpace(ctx context.Context) error {
	if d.space == nil {
		return embed.EnsureSpace(ctx, d.Pool, d.Embedder)
	}
	d.space.mu.Lock()
	defer d.space.mu.Unlock()
	if d.space.ok {
		return nil
	}
	if err := embed.EnsureSpace(ctx, d.Pool, d.Embedder); err != nil {
		return err
	}
	d.space.ok = true
	return nil
}

// Reembed switches the stored embedding space to e and queues every tool's enrich_tool
// job, in one transaction: component embeddings and tool vectors are dropped, the vector
// column re-typed and its index rebuilt, and the jobs re-embed every component (their
// enrichment outputs are kept, so no LLM call is made). Returns the number of tools queued.
func Reembed(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], e embed.Embedder) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := embed.Rebuild(ctx, tx, e); err != nil {
			return err
		}
		q := db.New(tx)
		rows, err := q.ListToolIDsAndHashes(ctx)
		if err != nil {
			return err
		}
		params := make([]river.InsertManyParams, len(rows))
		for i, r := range rows {
			params[i] = river.InsertManyParams{Args: EnrichToolArgs{ToolID: r.ID, ContentHash: r.ContentHash}}
		}
		n = len(params)
		if n == 0 {
			return nil
		}
		_, err = rc.InsertManyTx(ctx, tx, params)
		return err
	})
	return n, err
}
