package search

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/plan"
)

// Explanation says why a result has its score (docs/explain.md). The
// ranks, the shares and the fused score are the ranking's own (the Search statement's); the
// BM25 score, the similarity and the terms are recomputed with the statement's formulas
// from the texts whose candidate lists held the tool.
type Explanation struct {
	// FusedScore is the result's score: Lexical.Share + Vector.Share + Meaning.Share (a
	// branch that did not score the tool adds nothing). A name match puts a tool first whatever its score and
	// adds nothing to it.
	FusedScore float64 `json:"fused_score"`
	NameMatch  bool    `json:"name_match"`
	// Lexical, Vector and Meaning are nil when that branch did not score the tool.
	Lexical *LexicalExplanation `json:"lexical"`
	Vector  *VectorExplanation  `json:"vector"`
	Meaning *MeaningExplanation `json:"meaning"`
	// Memory is the memory branch's part (docs/learning.md); nil when no memory voted.
	Memory *MemoryExplanation `json:"memory"`
	// Task is the plan's intent whose ranking gave the tool its score (nil without a plan).
	Task *TaskExplanation `json:"task"`
	// Rules are the curation rules that pinned or boosted the tool (docs/curations.md): a
	// boost multiplies the fused score, which is then the branches' shares times the boosts.
	Rules []RuleAction `json:"rules,omitempty"`
	// Demotion is the factor negative evidence multiplied the score by, below 1 (the
	// caller's tenant's or the operator's searches returned the tool first and used another,
	// or its calls failed: docs/learning.md#negative-evidence); 0 (left out): none.
	Demotion float64 `json:"demotion,omitempty"`
}

// RuleAction is a curation rule that acted on a result: a pin (Position) or a boost (Boost).
type RuleAction struct {
	ID       int64    `json:"id"`
	Action   string   `json:"action"`
	Boost    *float64 `json:"boost,omitempty"`
	Position *int     `json:"position,omitempty"`
}

// LexicalExplanation is the lexical branch's part of a score.
type LexicalExplanation struct {
	Rank int     `json:"rank"` // the result's lexical_rank
	BM25 float64 `json:"bm25"` // the best over the texts whose lexical lists held the tool
	// Share is what the branch added to the fused score, summed over those texts.
	Share float64 `json:"share"`
	// Terms are the lexemes of those texts that the tool's document holds, rarest first.
	Terms []TermMatch `json:"terms"`
}

// TermMatch is a query lexeme found in a tool's document.
type TermMatch struct {
	Term string  `json:"term"`
	IDF  float64 `json:"idf"`
	// TF is the lexeme's weighted term frequency in the document, as BM25 scores it: the
	// sum of the weights of the fields holding each occurrence (name and title 3, ... ,
	// parameters 0.5; docs/search.md#the-lexical-index).
	TF float64 `json:"tf"`
	// Fields are the document's fields that hold the lexeme.
	Fields []string `json:"fields"`
}

// VectorExplanation is the vector branch's part of a score.
type VectorExplanation struct {
	// Rank is the result's vector_rank: nil for a lexical candidate that a score fusion
	// gave its similarity without the nearest-neighbour search returning it.
	Rank *int `json:"rank"`
	// Similarity is the cosine similarity of the tool's vector to the query's in the
	// vector set that served the search, the best over the texts whose lists held it.
	Similarity float64 `json:"similarity"`
	Share      float64 `json:"share"`
}

// MeaningExplanation is the meaning branch's part of a score (docs/search.md#meaning): what
// it added to the fused score, summed over the texts whose lists held the tool.
type MeaningExplanation struct {
	Share float64 `json:"share"`
}

// MemoryExplanation is the memory branch's part of a score: what it added to the fused
// score, and the caller's own tenant's memories of the tool nearest to the query (the
// operator's, for the operator). A memory another tenant taught, or a global one a search
// key did not teach itself, adds to the share but is never shown.
type MemoryExplanation struct {
	Share    float64       `json:"share"`
	Memories []MemoryMatch `json:"memories"`
}

// MemoryMatch is a memory of the tool and its cosine similarity to the query.
type MemoryMatch struct {
	Query      string  `json:"query"`
	Similarity float64 `json:"similarity"`
}

// memoriesShown is how many memories per result explain shows.
const memoriesShown = 3

// TaskExplanation names a plan's intent: its index in Plan.Intents (as Result.Intent) and
// its query.
type TaskExplanation struct {
	Intent int    `json:"intent"`
	Text   string `json:"text"`
}

// Explain is how a search ranked: the fusion and its branch weights, the profile that
// served the search, the texts searched and the plan that made them.
type Explain struct {
	Fusion  Fusion        `json:"fusion"`
	Weights BranchWeights `json:"weights"`
	// VectorConfidence is τ of the vector confidence (0: off): a text's vector list whose
	// best similarity m is below it was fused at Weights.Vector · m / τ.
	VectorConfidence float64 `json:"vector_confidence"`
	Profile          string  `json:"profile"`
	// Texts are the texts searched, each with the intent it served (one entry per intent
	// when a text serves several) and its lexemes (none when the lexical branch did not run).
	Texts []ExplainedText `json:"texts"`
	// Plan is the plan the texts came from, the default plan's included; nil without one.
	Plan *plan.Plan `json:"plan"`
}

// BranchWeights are the fusion weights of the branches: the serving profile's when it has
// its own (docs/profiles.md#fusion-weights), else the settings'.
type BranchWeights struct {
	Lexical float64 `json:"lexical"`
	Vector  float64 `json:"vector"`
	// Meaning is the settings' meaning weight (0: the branch is off); profiles have none.
	Meaning float64 `json:"meaning"`
	// Memory is the settings' memory weight (0: the branch is off or did not run).
	Memory float64 `json:"memory"`
}

// ExplainedText is one text a search ran, for one intent.
type ExplainedText struct {
	Intent int      `json:"intent"`
	Text   string   `json:"text"`
	Terms  []string `json:"terms"`
}

// explain fills in resp.Explain and the explanation of every result; rows are the results'
// rows of the Search statement, in order. It runs SearchExplain on to, the database the
// search read (the replica, if any), with the statement's per-transaction settings.
func (s *Service) explain(ctx context.Context, to batcher, pr *prepared, resp *Response, rows []db.SearchRow) error {
	explained, textTerms, err := s.explanations(ctx, to, pr, rows, false)
	if err != nil {
		return err
	}
	for i := range rows {
		resp.Results[i].Explanation = explained[i]
	}
	p := pr.params
	st := s.settings
	// the weights the statement fused with: the serving profile's, else the settings'
	weights := BranchWeights{Lexical: st.WeightLexical, Vector: st.WeightVector}
	if len(p.Meanings) > 0 { // the branch ran
		weights.Meaning = p.WMeaning
	}
	if len(p.Vecs) > 0 {
		weights.Memory = p.WMemory
	}
	if len(rows) > 0 {
		weights.Lexical, weights.Vector = rows[0].WeightLexical, rows[0].WeightVector
	}
	x := &Explain{Fusion: cmp.Or(st.Fusion, FusionRRF), Weights: weights, VectorConfidence: st.VectorConfidence,
		Profile: resp.Profile, Texts: make([]ExplainedText, len(p.TextVariants)), Plan: pr.plan}
	for i, v := range p.TextVariants {
		x.Texts[i] = ExplainedText{Intent: int(p.TextGroups[i]) - 1, Text: pr.texts[v-1], Terms: emptyIfNil(textTerms[v])}
	}
	resp.Explain = x
	return nil
}

// explanations explains rows, the Search statement's rows of some tools (every row carries
// the vector set of the search), and returns the lexemes of each text. With every, a tool's
// BM25 and similarity are recomputed over every text of the search, not only over the texts
// whose candidate lists held it: a tool that no list held, or only some, still shows what
// each branch scores it (why-not, whynot.go); a branch's part is then shown when it has a
// rank, a share or a score.
func (s *Service) explanations(ctx context.Context, to batcher, pr *prepared, rows []db.SearchRow, every bool) ([]*Explanation, map[int32][]string, error) {
	p := pr.params
	args := db.SearchExplainParams{Names: make([]string, len(rows)), Texts: p.Texts, Vecs: p.Vecs, Allowed: p.Allowed,
		Tenant: p.Tenant}
	for i, row := range rows {
		ord := int32(i + 1)
		args.Names[i] = *row.Name
		args.VectorSet = row.VectorSet // every row's: the set of the search
		lexTexts, vecTexts := row.LexicalTexts, row.VectorTexts
		if every {
			lexTexts, vecTexts = allTexts(len(p.Texts)), allTexts(len(p.Vecs))
		}
		for _, v := range lexTexts {
			args.LexOrds, args.LexVariants = append(args.LexOrds, ord), append(args.LexVariants, v)
		}
		for _, v := range vecTexts {
			args.VecOrds, args.VecVariants = append(args.VecOrds, ord), append(args.VecVariants, v)
		}
	}
	qp := db.New(newPipeline(to))
	if err := qp.SearchSetConfig(ctx, pr.config); err != nil {
		return nil, nil, err
	}
	out, err := qp.SearchExplain(ctx, args)
	if err != nil {
		return nil, nil, fmt.Errorf("explain: %w", err)
	}
	memories, err := s.memoryTexts(ctx, to, pr, rows)
	if err != nil {
		return nil, nil, err
	}
	bm25 := make([]float64, len(rows)) // BM25 is never negative
	sim := make([]*float64, len(rows)) // a cosine similarity may be
	terms := make([][]TermMatch, len(rows))
	textTerms := make(map[int32][]string)
	for _, x := range out {
		i := int(x.Ord) - 1
		switch x.Kind {
		case "bm25":
			bm25[i] = max(bm25[i], x.Value)
		case "sim":
			if sim[i] == nil || x.Value > *sim[i] {
				sim[i] = &x.Value
			}
		case "term":
			terms[i] = append(terms[i], TermMatch{Term: x.Lexeme, IDF: x.Value, TF: float64(x.Tf), Fields: emptyIfNil(x.Fields)})
		case "text":
			textTerms[x.Variant] = append(textTerms[x.Variant], x.Lexeme)
		}
	}
	explained := make([]*Explanation, len(rows))
	for i, row := range rows {
		e := &Explanation{FusedScore: row.Score, NameMatch: row.NameMatch > 0}
		if len(row.LexicalTexts) > 0 || (every && (bm25[i] > 0 || len(terms[i]) > 0)) {
			slices.SortFunc(terms[i], func(a, b TermMatch) int { return cmp.Or(cmp.Compare(b.IDF, a.IDF), cmp.Compare(a.Term, b.Term)) })
			e.Lexical = &LexicalExplanation{Rank: int(row.LexicalRank), BM25: bm25[i], Share: row.LexicalShare, Terms: emptyIfNil(terms[i])}
		}
		if len(row.VectorTexts) > 0 || (every && sim[i] != nil) {
			e.Vector = &VectorExplanation{Rank: rank(row.VectorRank), Share: row.VectorShare}
			if sim[i] != nil {
				e.Vector.Similarity = *sim[i]
			}
		}
		if row.MeaningShare != 0 {
			e.Meaning = &MeaningExplanation{Share: row.MeaningShare}
		}
		if row.MemoryShare != 0 {
			e.Memory = &MemoryExplanation{Share: row.MemoryShare, Memories: emptyIfNil(memories[*row.Name])}
		}
		if pr.plan != nil && row.Grp >= 1 && int(row.Grp) <= len(pr.plan.Intents) {
			e.Task = &TaskExplanation{Intent: int(row.Grp) - 1, Text: pr.plan.Intents[row.Grp-1].Query}
		}
		if row.Demotion < 1 {
			e.Demotion = row.Demotion
		}
		if len(row.Rules) > 0 {
			if err := json.Unmarshal(row.Rules, &e.Rules); err != nil {
				return nil, nil, fmt.Errorf("explain: the rules of %s: %w", *row.Name, err)
			}
		}
		explained[i] = e
	}
	return explained, textTerms, nil
}

// allTexts are the text indexes 1..n.
func allTexts(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i + 1)
	}
	return out
}

// memoryTexts are, per returned tool name whose score the memory branch added to, the
// caller's own tenant's memories nearest to the query's first vector.
func (s *Service) memoryTexts(ctx context.Context, to batcher, pr *prepared, rows []db.SearchRow) (map[string][]MemoryMatch, error) {
	var names []string
	for _, row := range rows {
		if row.MemoryShare != 0 {
			names = append(names, *row.Name)
		}
	}
	if len(names) == 0 || len(pr.params.Vecs) == 0 {
		return nil, nil
	}
	out, err := db.New(newPipeline(to)).MemoryTexts(ctx, db.MemoryTextsParams{
		Vec: pr.params.Vecs[0], Names: names, Tenant: pr.tenant, PerTool: memoriesShown})
	if err != nil {
		return nil, fmt.Errorf("explain: memories: %w", err)
	}
	m := make(map[string][]MemoryMatch)
	for _, x := range out {
		m[x.Name] = append(m[x.Name], MemoryMatch{Query: x.Query, Similarity: x.Sim})
	}
	return m, nil
}
