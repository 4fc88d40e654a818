package search

import (
	"context"
	"fmt"
	"time"

	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
)

// embedQuery embeds texts within the EmbedTimeout, for a caller who may see the sources
// allowed (nil: every source). A failure fails a vector search (EmbedError); a hybrid search
// goes on with no query vector, degraded says why.
func (s *Service) embedQuery(ctx context.Context, mode Mode, texts, allowed []string) (vecs []pgvector.Vector, took time.Duration, degraded string, err error) {
	vecs = []pgvector.Vector{}
	if len(texts) == 0 {
		return vecs, 0, "", nil
	}
	start := time.Now()
	ectx := ctx
	if t := s.settings.EmbedTimeout; t > 0 {
		var cancel context.CancelFunc
		ectx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	vs, err := s.embed(ectx, texts, allowed)
	if err == nil && len(vs) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(vs), len(texts))
	}
	took = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, "", ctx.Err() // the caller went away: nothing to degrade to
		}
		s.log.WarnContext(ctx, "query embedding failed", "mode", mode, "error", err, "ms", ms(took))
		if mode == ModeVector {
			return nil, 0, "", &EmbedError{Err: err}
		}
		// The caller learns what happened, not the provider's address or answer (logged).
		return vecs, took, "vector branch skipped: the query could not be embedded (" + (&EmbedError{Err: err}).Reason() + ")", nil
	}
	for _, v := range vs {
		vecs = append(vecs, pgvector.NewVector(v))
	}
	return vecs, took, "", nil
}

// embed embeds the query texts; an embedder that weights query words by their rarity
// (embed.Weighted) gets their idf from the lexical index, read where the search reads, with
// the statistics the search scores with (those of the allowed sources only, when allowed is
// not nil: a word's weight says nothing of a source the caller cannot see).
func (s *Service) embed(ctx context.Context, texts, allowed []string) ([][]float32, error) {
	w, ok := s.embedder.(embed.Weighted)
	if !ok || !s.settings.QueryIDF {
		return s.embedder.Embed(ctx, texts)
	}
	q := db.New(s.pool)
	if s.read != nil {
		q = db.New(s.read)
	}
	rows, err := q.SearchWordIDF(ctx, db.SearchWordIDFParams{Words: emptyIfNil(embed.QueryWords(texts)), Allowed: allowed})
	if err != nil {
		return nil, fmt.Errorf("query word idf: %w", err)
	}
	idf := make(map[string]float64, len(rows))
	for _, r := range rows {
		idf[r.Word] = r.Idf
	}
	return w.EmbedWeighted(ctx, texts, idf)
}

// ms is d in milliseconds, to the microsecond, as the retrieval log records times.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
