package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/vectors"
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
	// Failed are the steps whose output was malformed beyond repair: recorded as failed,
	// the tool stored without them.
	Failed []FailedStep
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
	// Notes say which generated questions were cut or dropped, and why.
	Notes []string `json:"notes,omitempty"`
}

type profileOutput struct {
	// Profile is null when the generated profile failed its faithfulness judgement twice and
	// only the original document is kept.
	Profile *Profile `json:"tool_profile"`
	Notes   []string `json:"notes,omitempty"`
}

type topicsOutput struct {
	Topics []string `json:"topics"`
	Notes  []string `json:"notes,omitempty"`
}

// failedOutput is what is stored for a step whose output was malformed beyond repair (after
// a second try with a model): the reason, so that the tool shows it, the source counts it
// and the same content is not enriched into the same failure again. The tool is stored
// with the components it has. Its other fields are those of no output: a reader decoding
// it as the step's output finds none.
type failedOutput struct {
	Failed string `json:"failed"`
}

// FailedStep is a step of a tool's enrichment whose output was malformed beyond repair.
type FailedStep struct {
	Step   string
	Reason string
}

// deterministic is implemented by an enricher whose outputs depend on the document only
// (Heuristic): asking it again gives the same output.
type deterministic interface{ Deterministic() bool }

func (s *Service) deterministic() bool {
	d, ok := s.Enricher.(deterministic)
	return ok && d.Deterministic()
}

// EnrichTool enriches and embeds the definition of tool toolID whose content hash is
// contentHash: the Tool-DE profile, the synthetic questions and the key topics (each reused
// when already produced for this content hash by this model), then the embedding of every
// changed component, then the tool's vector in every writable vector set (package vectors).
// A tool deleted or changed since is skipped (Report.Skipped). Provider calls happen
// before the write transaction; the writes (outputs, components, vectors) commit together
// or not at all.
func (s *Service) EnrichTool(ctx context.Context, toolID int64, contentHash string) (Report, error) {
	var rep Report
	if s.Embedder == nil || s.Enricher == nil {
		return rep, errors.New("enrich_tool: no embedder or enricher configured in this process")
	}
	tool, skipped, err := currentTool(ctx, db.New(s.Pool), toolID, contentHash)
	if err != nil || skipped != "" {
		rep.Skipped = skipped
		return rep, err
	}
	if err := s.ensureSpace(ctx); err != nil {
		return rep, err
	}
	doc := toolDocument(tool)
	st, err := s.storedSteps(ctx, tool)
	if err != nil {
		return rep, err
	}
	out, err := s.produceOutputs(ctx, doc, st)
	rep.Usage, rep.Failed = st.usage, st.failed
	if err != nil {
		return rep, err
	}
	if tool.ExpansionOff {
		// the operator switched the tool's knowledge expansion off (docs/curations.md): its
		// component goes with this write (the stored step output is kept for when it is on)
		out.Expansion = nil
	}
	for _, f := range st.failed {
		if s.Logger != nil {
			s.Logger.Warn("enrichment output malformed beyond repair; tool stored without it",
				"tool_id", tool.ID, "tool", tool.Name, "step", f.Step, "reason", f.Reason)
		}
	}
	comps := Components(doc, out)
	vecs, err := s.embedComponents(ctx, tool.ID, comps, &rep)
	if err != nil {
		return rep, err
	}
	if err := vectors.EnsureCurrentSets(ctx, s.Pool); err != nil {
		return rep, err
	}
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		return s.store(ctx, tx, tool, st, comps, vecs, &rep)
	})
	if err != nil {
		return rep, err
	}
	if rep.Skipped == "" && s.Logger != nil {
		s.Logger.Debug("tool enriched", "tool", tool.Name, "steps", rep.Steps, "embedded", rep.Embedded,
			"vectors", rep.Vectors, "prompt_tokens", rep.Usage.PromptTokens, "completion_tokens", rep.Usage.CompletionTokens)
	}
	return rep, nil
}

// currentTool reads the tool, or says why there is nothing to do: "deleted", or
// "superseded" when its definition changed again (the job queued for the new hash does
// the work).
func currentTool(ctx context.Context, q *db.Queries, toolID int64, contentHash string) (db.Tool, string, error) {
	tool, err := q.GetToolByID(ctx, toolID)
	if errors.Is(err, pgx.ErrNoRows) {
		return tool, "deleted", nil
	}
	if err != nil {
		return tool, "", err
	}
	if tool.ContentHash != contentHash {
		return tool, "superseded", nil
	}
	return tool, "", nil
}

// toolDocument is the stored definition as the document enrichment expands.
func toolDocument(tool db.Tool) Document {
	title := ""
	if tool.Title != nil {
		title = *tool.Title
	}
	return NewDocument(tool.OriginalName, title, tool.Description, tool.InputSchema)
}

// steps are one tool's enrichment outputs: those stored for its content hash by this
// model, which are reused, and those produced now, which the write stores.
type steps struct {
	toolID   int64
	model    string
	stored   map[string]json.RawMessage
	produced map[string]stepOutput
	usage    Usage // of the provider calls made now
	// failed are the steps whose output was malformed beyond repair
	failed []FailedStep
}

// storedSteps reads the outputs stored for the tool's current content hash by this model.
func (s *Service) storedSteps(ctx context.Context, tool db.Tool) (*steps, error) {
	rows, err := db.New(s.Pool).ListToolEnrichments(ctx, tool.ID)
	if err != nil {
		return nil, err
	}
	st := &steps{toolID: tool.ID, model: s.Enricher.Model(), stored: map[string]json.RawMessage{}, produced: map[string]stepOutput{}}
	for _, e := range rows {
		if e.ContentHash == tool.ContentHash && e.Model == st.model {
			st.stored[e.Step] = e.Output
		}
	}
	return st, nil
}

// reuse decodes the stored output of step into v; false when there is none or it does not
// decode (it is then produced again). A recorded failure decodes as no output.
func (st *steps) reuse(step string, v any) bool {
	raw, ok := st.stored[step]
	return ok && json.Unmarshal(raw, v) == nil
}

// fail records step as failed for this content: stored as a failedOutput, not produced
// again for it.
func (st *steps) fail(me *MalformedOutputError) {
	st.failed = append(st.failed, FailedStep{Step: me.Step, Reason: me.Reason})
	st.record(me.Step, failedOutput{Failed: me.Reason}, Usage{})
}

// record keeps output, produced now at the cost u, to be stored as step's.
func (st *steps) record(step string, output any, u Usage) {
	st.produced[step] = stepOutput{mustJSON(output), u}
}

// produceOutputs reuses or produces each step's output. The usage of the calls made is
// in st, also when one failed. A step whose output is malformed beyond repair is asked
// for once more when the enricher is a model (it may answer otherwise), then recorded as
// failed (st.fail) and the other steps go on: the tool is stored with what it has rather
// than retried into the same failure. Other errors (a provider down) fail the job, which
// River retries.
func (s *Service) produceOutputs(ctx context.Context, doc Document, st *steps) (Outputs, error) {
	var out Outputs
	run := func(step func() error) error {
		err := step()
		var me *MalformedOutputError
		if errors.As(err, &me) && !s.deterministic() {
			err = step()
		}
		if errors.As(err, &me) {
			st.fail(me)
			return nil
		}
		return err
	}
	var err error
	if err = run(func() (e error) { out.Profile, e = s.profileStep(ctx, doc, st); return e }); err != nil {
		return out, err
	}
	if err = run(func() (e error) { out.Questions, e = s.questionsStep(ctx, doc, st); return e }); err != nil {
		return out, err
	}
	if err = run(func() (e error) { out.Topics, e = s.topicsStep(ctx, doc, st); return e }); err != nil {
		return out, err
	}
	if out.Expansion, err = s.expansionStep(ctx, doc, st); err != nil {
		return out, err
	}
	return out, nil
}

// note logs what the repair of step's output changed, with the tool's id.
func (s *Service) note(st *steps, step string, notes []string) {
	if len(notes) == 0 || s.Logger == nil {
		return
	}
	s.Logger.Warn("enrichment output repaired", "tool_id", st.toolID, "step", step, "notes", notes)
}

func (s *Service) profileStep(ctx context.Context, doc Document, st *steps) (*Profile, error) {
	var po profileOutput
	if st.reuse(StepProfile, &po) {
		return po.Profile, nil
	}
	p, u, err := s.Enricher.Profile(ctx, doc)
	st.usage = st.usage.Add(u)
	if err != nil {
		return nil, err
	}
	// Repaired here, whichever enricher made it (RepairProfile), with what was cut on record.
	var notes []string
	if p != nil {
		if notes, err = p.Repair(); err != nil {
			s.note(st, StepProfile, notes)
			return nil, err
		}
	}
	s.note(st, StepProfile, notes)
	st.record(StepProfile, profileOutput{Profile: p, Notes: notes}, u)
	return p, nil
}

// questionsStep reuses stored questions only when as many were asked for as now.
func (s *Service) questionsStep(ctx context.Context, doc Document, st *steps) ([]string, error) {
	var qo questionsOutput
	if st.reuse(StepQuestions, &qo) && qo.N == s.Questions {
		return qo.Questions, nil
	}
	qs, u, err := s.Enricher.Questions(ctx, doc, s.Questions)
	st.usage = st.usage.Add(u)
	if err != nil {
		return nil, err
	}
	// The enricher's list is repaired here, whichever enricher made it, so that one
	// over-long question costs that question only and what was cut is on record.
	qs, notes, err := RepairQuestions(qs, s.Questions)
	s.note(st, StepQuestions, notes)
	if err != nil {
		return nil, err
	}
	st.record(StepQuestions, questionsOutput{N: s.Questions, Questions: qs, Notes: notes}, u)
	return qs, nil
}

func (s *Service) topicsStep(ctx context.Context, doc Document, st *steps) ([]string, error) {
	var to topicsOutput
	if st.reuse(StepTopics, &to) {
		return to.Topics, nil
	}
	ts, u, err := s.Enricher.Topics(ctx, doc)
	st.usage = st.usage.Add(u)
	if err != nil {
		return nil, err
	}
	ts, notes, err := RepairTopics(ts)
	s.note(st, StepTopics, notes)
	if err != nil {
		return nil, err
	}
	st.record(StepTopics, topicsOutput{Topics: ts, Notes: notes}, u)
	return ts, nil
}

// embedComponents embeds only the components whose text is new or that lack a vector of
// this space, and returns the vectors of comps by text hash. The tool's observed queries
// (internal/observed) are not enrichment's, but they are kept, and embedded here when they
// lack a vector (after a reembed).
func (s *Service) embedComponents(ctx context.Context, toolID int64, comps []Component, rep *Report) (map[string][]float32, error) {
	old, err := db.New(s.Pool).ListToolComponents(ctx, toolID)
	if err != nil {
		return nil, err
	}
	vecs := s.vectorSpace().Vectors(old)
	pending := comps
	for _, o := range old {
		if o.Kind == tdwa.KindObserved {
			pending = append(pending[:len(pending):len(pending)], Component{Kind: o.Kind, Ordinal: int(o.Ordinal), Text: o.Text})
		}
	}
	rep.Embedded, err = s.embedMissing(ctx, pending, vecs)
	return vecs, err
}

// store writes, in tx, the produced outputs, the tool's vectors (package vectors) and its
// components, unless the tool was deleted or changed since it was read (rep.Skipped).
func (s *Service) store(ctx context.Context, tx pgx.Tx, tool db.Tool, st *steps, comps []Component, vecs map[string][]float32, rep *Report) error {
	// Not waiting for this commit's WAL flush is safe: River marks the job completed
	// afterwards with a synchronous commit, which flushes this one's WAL too; a crash in
	// between leaves the job running, and River runs it again.
	if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return err
	}
	if err := embed.CheckSpace(ctx, tx, s.Embedder); err != nil {
		return err
	}
	q := db.New(tx)
	skipped, err := lockCurrent(ctx, q, tool.ID, tool.ContentHash)
	if err != nil || skipped != "" {
		rep.Skipped = skipped
		return err
	}
	if err := storeOutputs(ctx, q, tool, st, rep); err != nil {
		return err
	}
	all, err := s.withObserved(ctx, q, tool.ID, comps, vecs)
	if err != nil {
		return err
	}
	if rep.Vectors, err = vectors.Write(ctx, q, tool.ID, tdwaComponents(all, vecs)); err != nil {
		return err
	}
	// The components last (lock order, internal/locks/locks.go: components before
	// vector rows would be as good, but the vector upserts are the slow part and hold
	// no lock another writer of this tool needs).
	params := componentParams(tool.ID, s.Embedder.Model(), all, vecs)
	if err := q.DeleteStaleToolComponents(ctx, db.DeleteStaleToolComponentsParams{ToolID: tool.ID, Kinds: params.Kinds, Ordinals: params.Ordinals}); err != nil {
		return err
	}
	if err := q.UpsertToolComponents(ctx, params); err != nil {
		return fmt.Errorf("write components: %w", err)
	}
	return nil
}

// lockCurrent takes the tool's row (lock order, step 2) and says why there is nothing to
// write: "deleted", or "superseded" when its content hash is no longer contentHash.
func lockCurrent(ctx context.Context, q *db.Queries, toolID int64, contentHash string) (string, error) {
	hash, err := q.LockToolHash(ctx, toolID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "deleted", nil
	}
	if err != nil {
		return "", err
	}
	if hash != contentHash {
		return "superseded", nil
	}
	return "", nil
}

// storeOutputs stores the outputs produced now, each keyed by the tool's content hash and
// the model, and lists their steps in rep.
func storeOutputs(ctx context.Context, q *db.Queries, tool db.Tool, st *steps, rep *Report) error {
	for step, so := range st.produced {
		if err := q.UpsertToolEnrichment(ctx, db.UpsertToolEnrichmentParams{
			ToolID: tool.ID, Step: step, ContentHash: tool.ContentHash, Model: st.model, Output: so.output,
			PromptTokens: int32(so.usage.PromptTokens), CompletionTokens: int32(so.usage.CompletionTokens),
		}); err != nil {
			return err
		}
		rep.Steps = append(rep.Steps, step)
	}
	return nil
}

// withObserved appends to comps the tool's observed queries as they are now, under the
// tool's lock (a refresh that committed since they were read before is kept, not undone),
// those with a vector, adding their stored vectors to vecs.
func (s *Service) withObserved(ctx context.Context, q *db.Queries, toolID int64, comps []Component, vecs map[string][]float32) ([]Component, error) {
	observed, err := q.ListToolComponentsOfKind(ctx, db.ListToolComponentsOfKindParams{ToolID: toolID, Kind: tdwa.KindObserved})
	if err != nil {
		return nil, err
	}
	all := comps[:len(comps):len(comps)]
	for k, v := range s.vectorSpace().Vectors(observed) {
		vecs[k] = v
	}
	for _, o := range observed {
		if _, ok := vecs[o.TextHash]; ok {
			all = append(all, Component{Kind: o.Kind, Ordinal: int(o.Ordinal), Text: o.Text})
		}
	}
	return all, nil
}

// vectorSpace is the embedding space of the configured embedder.
func (s *Service) vectorSpace() vectors.Space {
	return vectors.Space{Model: s.Embedder.Model(), Dims: s.Embedder.Dims()}
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
		var err error
		n, err = reembedTx(ctx, tx, queue, e)
		return err
	})
	return n, err
}

// UpgradeLocalSpace moves a catalog embedded by an older version of the built-in local
// embedder to e, when e is a newer version of it with the same dimension: it does what
// Reembed does, so the workers re-embed every tool; meanwhile searches answer with the
// lexical branch and the vectors rebuilt so far. Anything else (no space yet, the same
// space, another embedder or dimension) is left alone and returns 0: EnsureSpace decides.
// Processes starting at once upgrade once: the space is read again under its lock.
func UpgradeLocalSpace(ctx context.Context, pool *pgxpool.Pool, queue Queue, e embed.Embedder) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := embed.LockSpace(ctx, tx); err != nil {
			return err
		}
		sp, err := db.New(tx).GetEmbeddingSpace(ctx)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if !embed.OlderLocal(sp.Model, int(sp.Dims), e) {
			return nil
		}
		n, err = reembedTx(ctx, tx, queue, e)
		return err
	})
	return n, err
}

// reembedTx switches the space to e and queues every tool's enrich_tool job inside tx.
func reembedTx(ctx context.Context, tx pgx.Tx, queue Queue, e embed.Embedder) (int, error) {
	if err := embed.Rebuild(ctx, tx, e); err != nil {
		return 0, err
	}
	rows, err := db.New(tx).ListToolIDsAndHashes(ctx)
	if err != nil {
		return 0, err
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return len(ids), queue.EnrichTx(ctx, tx, ids)
}
