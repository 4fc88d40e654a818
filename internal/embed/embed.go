// Package embed turns text into vectors: an OpenAI-compatible /v1/embeddings client and a
// built-in local embedder that needs no model weights.
package embed

import "context"

// Embedder embeds texts into one vector space.
type Embedder interface {
	// Model names the vector space, e.g. "local-hash-v2" or "openai:text-embedding-3-small";
	// vectors of different models are never mixed.
	Model() string
	// Dims is the length of every vector Embed returns.
	Dims() int
	// Embed returns one L2-normalized vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Weighted is an embedder that weights the words of a query by their rarity in the catalog
// (the local embedder; a model weighs words itself). idf maps a word of QueryWords to its
// BM25 idf in the lexical index.
type Weighted interface {
	EmbedWeighted(ctx context.Context, texts []string, idf map[string]float64) ([][]float32, error)
}
