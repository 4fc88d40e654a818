package search

import (
	"math"
	"slices"
	"unicode"

	"github.com/toolgate/toolgate/internal/confidence"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
)

// ConfidenceThreshold is the answer confidence below which a search says it found no good
// match (Response.NoGoodMatch): on the multi-domain development set an answer under it has
// its first result right in one search in five, one above it in seven of ten
// (docs/search.md#confidence).
const ConfidenceThreshold = 0.4

// signals are what tells a right result from a wrong one: what the statement says about it
// — each branch's share of its score as a fraction of the branch's weight (1: the branch's
// best candidate, the vector share lowered by the vector confidence when its best similarity
// is weak), whether both the lexical and the vector branch found it, its BM25, its score
// relative to the first result's, and its rank — the share of the request's letters
// written in Chinese, Japanese or Korean script (cjkShare), on which the other signals of
// a right answer are weaker, and how far the result's title and description are from the
// request in that share (scriptGap: an English request answered by a Chinese tool, whose
// match crossed languages through the lexicon and meaning, has weaker signals too).
type signals struct {
	lexical, vector, meaning float64
	both                     bool
	bm25                     float64
	relative                 float64
	rank                     int
	cjk, scriptGap           float64
}

// features are the inputs of the confidence model, in the order of its coefficients.
func (s signals) features() []float64 {
	both := 0.0
	if s.both {
		both = 1
	}
	return []float64{s.lexical, s.vector, s.meaning, both, math.Log1p(s.bm25), s.relative, math.Log(float64(s.rank)), s.cjk, s.scriptGap}
}

// cjkShare is the share of the letters and digits of text that are kana, CJK ideographs or
// hangul (embed.IsCJK): 0 for an English request, 1 for a Chinese one, 0 without letters.
func cjkShare(text string) float64 {
	var letters, cjk int
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			letters++
			if embed.IsCJK(r) {
				cjk++
			}
		}
	}
	if letters == 0 {
		return 0
	}
	return float64(cjk) / float64(letters)
}

// confidenceModels are the logistic models of one set of branches: result is the model of
// "this result is a tool the request needs" over signals.features, answer the model of "the
// first result is a tool the request needs" over the first result's features and the gap to
// the second (1 - its relative score; 1 when there is no second result). Each is the
// intercept, then one coefficient per feature (then the gap's). They are fitted by
// `toolgate eval fit-confidence` on the searches of `toolgate eval --mode all` over
// the fitting halves of the development sets, built-in providers and default settings,
// one pair per set of branches that ran (docs/eval.md#calibration): a single branch cannot
// fill the hybrid model's features (a vector-only answer has no BM25 and is never found by
// both branches).
type confidenceModels struct {
	branches       string // hybrid, lexical or vector: confidence.Inputs.Branches
	result, answer []float64
}

var (
	hybridConfidence = confidenceModels{
		branches: "hybrid",
		result:   []float64{-5.019, -0.072, 1.778, 0.584, -0.148, 0.49, 2.107, -1.245, 1.386, 1.23},
		answer:   []float64{-4.889, -1.661, 1.673, 0.741, 0.591, 1.334, 0, 0, 1.188, 1.672, 3.395},
	}
	lexicalConfidence = confidenceModels{
		branches: "lexical",
		result:   []float64{-5.834, 1.383, 0, 0, 0, 1.223, 0.953, -0.949, 0.284, 1.269},
		answer:   []float64{-7.196, 0, 0, 0, 0, 2.323, 0, 0, 0.446, 1.814, 2.796},
	}
	vectorConfidence = confidenceModels{
		branches: "vector",
		result:   []float64{-3.671, 0, 2.4, 0, 0, 0, 1.293, -0.869, 0.822, 0.037},
		answer:   []float64{-3.368, 0, 2.804, 0, 0, 0, 0, 0, -0.129, 0.972, 2.911},
	}
)

// modelsFor is the pair of models of a search whose lexical and vector branches ran or not
// (a hybrid search without an embedder, or whose query could not be embedded, ran its
// lexical branch alone).
func modelsFor(lexical, vector bool) confidenceModels {
	switch {
	case lexical && !vector:
		return lexicalConfidence
	case vector && !lexical:
		return vectorConfidence
	default:
		return hybridConfidence
	}
}

// nameMatchConfidence is the confidence of a result whose name the request named: it is
// the tool asked for.
const nameMatchConfidence = 0.99

// ConfidenceOf is what the served models of in.Branches make of in: the answer's confidence
// and each result's, before a name match overrides them and before rounding. It is the
// function the search itself applies (setConfidence).
func ConfidenceOf(in confidence.Inputs) (answer float64, results []float64) {
	m := modelsByBranches(in.Branches)
	results = make([]float64, len(in.Results))
	for i, r := range in.Results {
		results[i] = confidence.Logistic(m.result, r.Features)
	}
	if in.Answer != nil {
		answer = confidence.Logistic(m.answer, in.Answer)
	}
	return answer, results
}

// modelsByBranches is the pair of models named branches (the hybrid pair for any other name).
func modelsByBranches(branches string) confidenceModels {
	switch branches {
	case lexicalConfidence.branches:
		return lexicalConfidence
	case vectorConfidence.branches:
		return vectorConfidence
	default:
		return hybridConfidence
	}
}

// setConfidence gives each result of resp its confidence and resp its answer confidence,
// from the statement's rows of the results (in their order), and records the models' inputs
// in resp.ConfidenceInputs: wMeaning is the meaning branch's weight in the search, lexical
// and vector whether those branches ran, query the request's text. An answer without
// results has confidence 0.
func setConfidence(resp *Response, rows []db.SearchRow, query string, wMeaning float64, lexical, vector bool) {
	m := modelsFor(lexical, vector)
	in := confidence.Inputs{Branches: m.branches, Results: make([]confidence.ResultInputs, len(resp.Results))}
	cjk := cjkShare(query)
	for i := range resp.Results {
		sig := signalsOf(rows[i], rows[0].Score, wMeaning, i+1)
		sig.cjk = cjk
		sig.scriptGap = math.Abs(cjk - cjkShare(deref(rows[i].Title)+" "+deref(rows[i].Description)))
		in.Results[i] = confidence.ResultInputs{Features: sig.features(), NameMatch: resp.Results[i].NameMatch}
	}
	if len(in.Results) > 0 {
		gap := 1.0
		if len(rows) > 1 {
			gap = 1 - signalsOf(rows[1], rows[0].Score, wMeaning, 2).relative
		}
		in.Answer = append(slices.Clone(in.Results[0].Features), gap)
	}
	resp.ConfidenceInputs = in
	answer, results := ConfidenceOf(in)
	for i := range resp.Results {
		if resp.Results[i].NameMatch {
			results[i] = nameMatchConfidence
		}
		resp.Results[i].Confidence = round3(results[i])
	}
	resp.Confidence = 0
	if len(resp.Results) > 0 {
		if resp.Results[0].NameMatch {
			answer = nameMatchConfidence
		}
		resp.Confidence = round3(answer)
	}
	resp.NoGoodMatch = resp.Confidence < ConfidenceThreshold
}

func signalsOf(row db.SearchRow, top, wMeaning float64, rank int) signals {
	s := signals{
		lexical: fraction(row.LexicalShare, row.WeightLexical),
		vector:  fraction(row.VectorShare, row.WeightVector),
		meaning: fraction(row.MeaningShare, wMeaning),
		both:    row.LexicalRank > 0 && row.VectorRank > 0,
		bm25:    row.Bm25,
		rank:    rank,
	}
	if top > 0 {
		s.relative = min(1, row.Score/top)
	}
	return s
}

// fraction is share/weight, 0 for a branch of weight 0, at most 1 (a share summed over
// several texts of a plan may exceed the weight).
func fraction(share, weight float64) float64 {
	if weight <= 0 {
		return 0
	}
	return min(1, share/weight)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
