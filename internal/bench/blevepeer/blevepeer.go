// Package blevepeer is a keyword search gateway for benchmarks only: it indexes a catalog's
// tools (name and description) in memory with the Bleve search library (english analysis,
// BM25 scoring) and answers POST /search with toolgate's request and response JSON, so that
// `toolgate bench peer` can measure toolgate's REST search next to a keyword engine of the
// same catalog, with the same queries and the same HTTP client. Nothing that serves
// requests in toolgate imports it.
package blevepeer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/search"
)

// Tool is one catalog tool as the peer indexes and returns it.
type Tool struct {
	Name        string // namespaced catalog name (source__original)
	Source      string
	Description string
	InputSchema json.RawMessage
}

// Peer is an in-memory Bleve index of a catalog; Handler serves it.
type Peer struct {
	idx   bleve.Index
	tools map[string]Tool
}

// document is what the index holds per tool: one analysed text field, the name's words
// (underscores, dots and dashes as spaces: Bleve's tokenizer keeps get_stock_price as one
// token) followed by the description.
type document struct {
	Text string `json:"text"`
}

// New indexes tools in memory. Names must be unique.
func New(tools []Tool) (*Peer, error) {
	m := mapping.NewIndexMapping()
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = index.BM25Scoring
	idx, err := bleve.NewMemOnly(m)
	if err != nil {
		return nil, fmt.Errorf("blevepeer: new index: %w", err)
	}
	p := &Peer{idx: idx, tools: make(map[string]Tool, len(tools))}
	b := idx.NewBatch()
	for _, t := range tools {
		if _, dup := p.tools[t.Name]; dup {
			return nil, fmt.Errorf("blevepeer: tool %q twice", t.Name)
		}
		p.tools[t.Name] = t
		words := strings.NewReplacer("_", " ", ".", " ", "-", " ").Replace(t.Name)
		if err := b.Index(t.Name, document{Text: words + " " + t.Description}); err != nil {
			return nil, fmt.Errorf("blevepeer: index %q: %w", t.Name, err)
		}
		if b.Size() >= 1000 {
			if err := idx.Batch(b); err != nil {
				return nil, fmt.Errorf("blevepeer: index batch: %w", err)
			}
			b.Reset()
		}
	}
	if err := idx.Batch(b); err != nil {
		return nil, fmt.Errorf("blevepeer: index batch: %w", err)
	}
	return p, nil
}

// Close releases the index.
func (p *Peer) Close() error { return p.idx.Close() }

// Search returns the k best tools for query: a match query (any of its analysed terms)
// over the text field, BM25-ranked, as toolgate results in format f (lexical ranks set,
// vector ranks nil).
func (p *Peer) Search(query string, k int, f search.Format) ([]search.Result, error) {
	q := bleve.NewMatchQuery(query)
	q.SetField("text")
	res, err := p.idx.Search(bleve.NewSearchRequestOptions(q, k, 0, false))
	if err != nil {
		return nil, err
	}
	out := make([]search.Result, 0, len(res.Hits))
	for i, h := range res.Hits {
		t := p.tools[h.ID]
		rank := i + 1
		out = append(out, search.Result{
			Name: t.Name, Source: t.Source, Score: h.Score, LexicalRank: &rank, BM25: h.Score,
			Tool: search.Tool{Format: f, Name: t.Name, FunctionName: catalog.FunctionName(t.Name),
				Source: t.Source, Description: t.Description, InputSchema: t.InputSchema},
		})
	}
	return out, nil
}

// Handler serves POST /search: a toolgate search.Request in (read as strictly, k and format
// defaulted as toolgate does; the other fields are accepted and ignored), a search.Response
// out (mode lexical). Errors are toolgate's JSON error shape.
func (p *Peer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /search", func(w http.ResponseWriter, r *http.Request) {
		var req search.Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
			return
		}
		if strings.TrimSpace(req.Query) == "" {
			writeError(w, http.StatusBadRequest, "invalid_request", "query: must not be empty")
			return
		}
		k := req.K
		if k == 0 {
			k = search.DefaultK
		}
		if k < 1 || k > search.MaxK {
			writeError(w, http.StatusBadRequest, "invalid_request", "k: "+strconv.Itoa(k)+" is out of range")
			return
		}
		f := req.Format
		if f == "" {
			f = search.FormatOpenAI
		}
		results, err := p.Search(req.Query, k, f)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "internal", err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(search.Response{Mode: search.ModeLexical, Format: f, Results: results})
	})
	return mux
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
