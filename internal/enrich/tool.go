package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// Service enriches and embeds stored tools: the work of the enrich_tool job (package jobs),
// of `toolgate eval` and of the benchmarks. Build it once per process and share it (it
// remembers that the stored embedding space matched Embedder); do not copy it after use.
type Service struct {
	Pool *pgxpool.Pool
	// Embedder and Enricher produce the vectors and the enrichment outputs; Questions is how
	// many synthetic questions to ask for per tool.
	Embedder  embed.Embedder
	Enricher  Enricher
	Questions int
	// Logger gets a debug line per enriched tool; nil logs nothing.
	Logger *slog.Logger

	space spaceCheck
}

// Report is what one run of EnrichTool did.
type Report struct {
	Skipped  string // why nothing was done: "deleted", "superseded"; empty otherwise
	Steps    []string
	Embedded int // components embedded by the provider
	Vectors  int // tool vectors written
	Usage    Usage
}

type stepOutput struct {
	output json.RawMessage
	usage  Usage
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
	Profile *Profile `json:"tool_profile"`
}

type topicsOutput struct {
	Topics []string `json:"topics"`
}

// EnrichTool enriches and embeds the definition of tool toolID whose content hash is
// contentHash: the Tool-DE profile, the synthetic questions and the key topics (each reused
// when already produced for this content hash by this model), then the embedding of every
// changed component, then the tool's vector in every writable vector set (TDWA, package
// tdwa). A tool deleted or changed since is skipped (Report.Skipped). Provider calls happen
// before the write transaction; the writes (outputs, components, vectors) commit together
// or not at all.
func (s *Service) EnrichTool(ctx context.Context, toolID int64, contentHash string) (Report, error) {
	var rep Report
	deps := s
	if deps.Embedder == nil || deps.Enricher == nil {
		return rep, errors.New("enrich_tool: no embedder or enricher configured in this process")
	}
	q := db.New(deps.Pool)
	tool, err := q.GetToolByID(ctx, toolID)
	if errors.Is(err, pgx.ErrNoRows) {
		rep.Skipped = "deleted"
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	if tool.ContentHash != contentHash {
		// The definition changed again; the job queued for the new hash does the work.
		rep.Skipped = "superseded"
		return rep, nil
	}
	if err := s.ensureSpace(ctx); err != nil {
		return rep, err
	}
	title := ""
	if tool.Title != nil {
		title = *tool.Title
	}
	doc := NewDocument(tool.OriginalName, title, tool.Description, tool.InputSchema)

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
	var out Outputs
	produced := map[string]stepOutput{}
	// profile
	var po profileOutput
	if raw, ok := have[StepProfile]; ok && json.Unmarshal(raw, &po) == nil {
		out.Profile = po.Profile
	} else {
		p, u, err := deps.Enricher.Profile(ctx, doc)
		rep.Usage = rep.Usage.Add(u)
		if err != nil {
			return rep, err
		}
		out.Profile = p
		produced[StepProfile] = stepOutput{mustJSON(profileOutput{Profile: p}), u}
	}
	// questions
	var qo questionsOutput
	if raw, ok := have[StepQuestions]; ok && json.Unmarshal(raw, &qo) == nil && qo.N == deps.Questions {
		out.Questions = qo.Questions
	} else {
		qs, u, err := deps.Enricher.Questions(ctx, doc, deps.Questions)
		rep.Usage = rep.Usage.Add(u)
		if err != nil {
			return rep, err
		}
		out.Questions = qs
		produced[StepQuestions] = stepOutput{mustJSON(questionsOutput{N: deps.Questions, Questions: qs}), u}
	}
	// topics
	var to topicsOutput
	if raw, ok := have[StepTopics]; ok && json.Unmarshal(raw, &to) == nil {
		out.Topics = to.Topics
	} else {
		ts, u, err := deps.Enricher.Topics(ctx, doc)
		rep.Usage = rep.Usage.Add(u)
		if err != nil {
			return rep, err
		}
		out.Topics = ts
		produced[StepTopics] = stepOutput{mustJSON(topicsOutput{Topics: ts}), u}
	}

	// Embed only the components whose text is new or that lack a vector of this space. The
	// tool's observed queries (internal/observed) are not enrichment's, but they are kept,
	// and embedded here when they lack a vector (after a reembed).
	comps := Components(doc, out)
	old, err := q.ListToolComponents(ctx, tool.ID)
	if err != nil {
		return rep, err
	}
	vectors := s.storedVectors(old)
	pending := comps
	for _, o := range old {
		if o.Kind == tdwa.KindObserved {
			pending = append(pending[:len(pending):len(pending)], Component{Kind: o.Kind, Ordinal: int(o.Ordinal), Text: o.Text})
		}
	}
	if rep.Embedded, err = s.embedMissing(ctx, pending, vectors); err != nil {
		return rep, err
	}
	emodel := deps.Embedder.Model()

	if err := ensureCurrentSets(ctx, s.Pool); err != nil {
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
		if hash != contentHash {
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
		// The observed queries as they are now, under the tool's lock: a refresh that
		// committed since they were read above is kept, not undone.
		observed, err := q.ListToolComponentsOfKind(ctx, db.ListToolComponentsOfKindParams{ToolID: tool.ID, Kind: tdwa.KindObserved})
		if err != nil {
			return err
		}
		all := comps[:len(comps):len(comps)]
		for k, v := range s.storedVectors(observed) {
			vectors[k] = v
		}
		for _, o := range observed {
			if _, ok := vectors[o.TextHash]; ok {
				all = append(all, Component{Kind: o.Kind, Ordinal: int(o.Ordinal), Text: o.Text})
			}
		}
		if rep.Vectors, err = storeToolVectors(ctx, q, tool.ID, tdwaComponents(all, vectors)); err != nil {
			return err
		}
		// The components last (lock order, internal/postgres/locks.go: components before
		// vector rows would be as good, but the vector upserts are the slow part and hold
		// no lock another writer of this tool needs).
		params := componentParams(tool.ID, emodel, all, vectors)
		if err := q.DeleteStaleToolComponents(ctx, db.DeleteStaleToolComponentsParams{ToolID: tool.ID, Kinds: params.Kinds, Ordinals: params.Ordinals}); err != nil {
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

// storedVectors indexes the stored component vectors of the configured embedding space by
// their text's hash: a text is embedded once, whatever kind or ordinal it moves to.
func (s *Service) storedVectors(stored []db.ToolComponent) map[string][]float32 {
	emodel, dims := s.Embedder.Model(), s.Embedder.Dims()
	out := map[string][]float32{}
	for _, c := range stored {
		if c.Embedding != nil && c.Model != nil && *c.Model == emodel && len(c.Embedding.Slice()) == dims {
			out[c.TextHash] = c.Embedding.Slice()
		}
	}
	return out
}

// embedMissing embeds, in one provider call, the texts of comps that have no vector in
// have (by text hash), adds their vectors to have and returns how many texts it embedded.
func (s *Service) embedMissing(ctx context.Context, comps []Component, have map[string][]float32) (int, error) {
	var texts, hashes []string
	asked := map[string]bool{}
	for _, c := range comps {
		h := c.Hash()
		if _, ok := have[h]; ok || asked[h] {
			continue
		}
		asked[h] = true
		texts = append(texts, c.Text)
		hashes = append(hashes, h)
	}
	if len(texts) == 0 {
		return 0, nil
	}
	vs, err := s.Embedder.Embed(ctx, texts)
	if err != nil {
		return 0, err
	}
	if len(vs) != len(texts) {
		return 0, fmt.Errorf("embedder returned %d vectors for %d texts", len(vs), len(texts))
	}
	for i, h := range hashes {
		have[h] = vs[i]
	}
	return len(texts), nil
}

// tdwaComponents pairs each component with its vector (by text hash) for tdwa.Combine.
func tdwaComponents(comps []Component, vectors map[string][]float32) []tdwa.Component {
	tc := make([]tdwa.Component, len(comps))
	for i, c := range comps {
		tc[i] = tdwa.Component{Kind: c.Kind, Ordinal: c.Ordinal, Vector: vectors[c.Hash()]}
	}
	return tc
}

// componentParams is the one statement that writes comps (each with its vector by text hash).
func componentParams(toolID int64, model string, comps []Component, vectors map[string][]float32) db.UpsertToolComponentsParams {
	params := db.UpsertToolComponentsParams{ToolID: toolID, Model: model,
		Kinds: make([]string, len(comps)), Ordinals: make([]int32, len(comps)), Texts: make([]string, len(comps)),
		TextHashes: make([]string, len(comps)), Embeddings: make([]string, len(comps))}
	for i, c := range comps {
		params.Kinds[i], params.Ordinals[i], params.Texts[i] = c.Kind, int32(c.Ordinal), c.Text
		params.TextHashes[i], params.Embeddings[i] = c.Hash(), pgvector.NewVector(vectors[c.Hash()]).String()
	}
	return params
}

// storeToolVectors writes the tool's vector, combined from tc, into every ready and
// building vector set, each with the weights it was built with, inside the caller's
// transaction (which holds the tool's row, LockToolHash). Returns the vectors written.
func storeToolVectors(ctx context.Context, q *db.Queries, toolID int64, tc []tdwa.Component) (int, error) {
	sets, err := q.ListWritableVectorSets(ctx)
	if err != nil {
		return 0, err
	}
	var vp []db.UpsertToolVectorParams
	for _, s := range sets {
		prof, err := tdwa.ParseProfile(s.Strategy, s.Weights)
		if err != nil {
			return 0, fmt.Errorf("weight profile %s: %w", s.Profile, err)
		}
		v, err := tdwa.Combine(tc, prof)
		var nc *tdwa.NoComponentsError
		if errors.As(err, &nc) {
			// The tool has none of the kinds this profile weighs: it has no vector there.
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("weight profile %s: %w", s.Profile, err)
		}
		vp = append(vp, db.UpsertToolVectorParams{SetID: s.SetID, ToolID: toolID, Embedding: pgvector.NewVector(v)})
	}
	if err := db.ExecBatch(q.UpsertToolVector(ctx, vp)); err != nil {
		return 0, fmt.Errorf("write tool vectors: %w", err)
	}
	return len(vp), nil
}

// ensureCurrentSets gives every profile without a current vector set a new ready one while
// the catalog has no embedded tool yet, so that the first enrichments have somewhere to go
// (the sets then fill as the catalog is enriched). A profile made later, over an embedded
// catalog, waits for its re-weight: a set started by the next enrichment would hold only
// the tools enriched from then on, and could be activated half empty. Concurrent callers
// serialize on the profile rows and the later ones find the sets made.
func ensureCurrentSets(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
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
			set, err := q.CreateVectorSet(ctx, db.CreateVectorSetParams{ProfileID: id, State: db.VectorSetReady})
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

// spaceCheck checks the stored embedding space against the process's embedder once per
// process; a mismatch is checked again on every job, so fixing it needs no restart.
type spaceCheck struct {
	mu sync.Mutex
	ok bool
}

func (s *Service) ensureSpace(ctx context.Context) error {
	s.space.mu.Lock()
	defer s.space.mu.Unlock()
	if s.space.ok {
		return nil
	}
	if err := embed.EnsureSpace(ctx, s.Pool, s.Embedder); err != nil {
		return err
	}
	s.space.ok = true
	return nil
}

// Queue queues enrich_tool jobs inside the caller's transaction (package jobs implements
// it: jobs.Queue).
type Queue interface {
	// EnrichTx queues, inside tx, the enrichment of the given tools' current definitions.
	EnrichTx(ctx context.Context, tx pgx.Tx, toolIDs []int64) error
}

// Reembed switches the stored embedding space to e and queues every tool's enrich_tool
// job, in one transaction: component embeddings and tool vectors are dropped, the vector
// column re-typed and its index rebuilt, and the jobs re-embed every component (their
// enrichment outputs are kept, so no LLM call is made). Returns the number of tools queued.
func Reembed(ctx context.Context, pool *pgxpool.Pool, queue Queue, e embed.Embedder) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := embed.Rebuild(ctx, tx, e); err != nil {
			return err
		}
		rows, err := db.New(tx).ListToolIDsAndHashes(ctx)
		if err != nil {
			return err
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		n = len(ids)
		return queue.EnrichTx(ctx, tx, ids)
	})
	return n, err
}
