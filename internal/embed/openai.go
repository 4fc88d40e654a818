package embed

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"golang.org/x/sync/errgroup"

	"github.com/toolgate/toolgate/internal/provider"
)

// OpenAIConfig configures an OpenAI-compatible /v1/embeddings client.
type OpenAIConfig struct {
	Provider provider.Config
	Model    string // e.g. text-embedding-3-small
	// Dims is the vector length. When SendDimensions is set it is sent as `dimensions`
	// (models that can shorten their vectors); otherwise it must equal the model's native
	// length and every answer is checked against it.
	Dims           int
	SendDimensions bool
	// MaxBatch is the most inputs sent in one request (the provider's limit; 2048 at OpenAI).
	MaxBatch int
}

// OpEmbed is the operation label of embedding calls in provider metrics and spans.
const OpEmbed = "embed"

// Usage counts the tokens a provider billed.
type Usage struct {
	PromptTokens int
	TotalTokens  int
}

// OpenAI embeds through an OpenAI-compatible /v1/embeddings endpoint.
type OpenAI struct {
	cfg    OpenAIConfig
	client *provider.Client
}

// NewOpenAI returns the client.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 256
	}
	return &OpenAI{cfg: cfg, client: provider.New(cfg.Provider)}
}

// Model is "openai:<model>" (with the dimension when it was requested).
func (o *OpenAI) Model() string {
	if o.cfg.SendDimensions {
		return fmt.Sprintf("openai:%s@%d", o.cfg.Model, o.cfg.Dims)
	}
	return "openai:" + o.cfg.Model
}

// Dims is the configured vector length.
func (o *OpenAI) Dims() int { return o.cfg.Dims }

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// Embed implements Embedder.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, _, err := o.EmbedWithUsage(ctx, texts)
	return v, err
}

// EmbedWithUsage embeds texts in batches of at most MaxBatch, sent concurrently up to the
// provider's concurrency, and returns the billed tokens.
func (o *OpenAI) EmbedWithUsage(ctx context.Context, texts []string) ([][]float32, Usage, error) {
	out := make([][]float32, len(texts))
	usages := make([]Usage, (len(texts)+o.cfg.MaxBatch-1)/o.cfg.MaxBatch)
	g, gctx := errgroup.WithContext(ctx)
	for b := 0; b*o.cfg.MaxBatch < len(texts); b++ {
		lo := b * o.cfg.MaxBatch
		hi := min(lo+o.cfg.MaxBatch, len(texts))
		g.Go(func() error {
			u, err := o.batch(gctx, texts[lo:hi], out[lo:hi])
			usages[b] = u
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, Usage{}, err
	}
	var total Usage
	for _, u := range usages {
		total.PromptTokens += u.PromptTokens
		total.TotalTokens += u.TotalTokens
	}
	return out, total, nil
}

func (o *OpenAI) batch(ctx context.Context, texts []string, out [][]float32) (Usage, error) {
	req := embeddingsRequest{Model: o.cfg.Model, Input: texts, EncodingFormat: "float"}
	if o.cfg.SendDimensions {
		req.Dimensions = o.cfg.Dims
	}
	var resp embeddingsResponse
	bad := func(format string, args ...any) error {
		return &provider.BadResponseError{URL: o.cfg.Provider.BaseURL + "/embeddings", Reason: fmt.Sprintf(format, args...)}
	}
	check := func() (int, error) {
		// Some servers report only prompt_tokens, which for embeddings is the same count.
		tokens := cmp.Or(resp.Usage.TotalTokens, resp.Usage.PromptTokens)
		if len(resp.Data) != len(texts) {
			return tokens, bad("%d embeddings for %d inputs", len(resp.Data), len(texts))
		}
		seen := make([]bool, len(texts))
		for _, d := range resp.Data {
			if d.Index < 0 || d.Index >= len(texts) || seen[d.Index] {
				return tokens, bad("embedding index %d out of range or repeated", d.Index)
			}
			if len(d.Embedding) != o.cfg.Dims {
				return tokens, bad("embedding of %d dimensions, want %d", len(d.Embedding), o.cfg.Dims)
			}
			seen[d.Index] = true
		}
		return tokens, nil
	}
	if err := o.client.Do(ctx, provider.Call{Op: OpEmbed, Path: "/embeddings", In: req, Out: &resp, Check: check}); err != nil {
		return Usage{}, err
	}
	for _, d := range resp.Data {
		out[d.Index] = Normalize(d.Embedding)
	}
	return Usage{PromptTokens: resp.Usage.PromptTokens, TotalTokens: resp.Usage.TotalTokens}, nil
}

// Normalize returns v scaled to unit length (v itself when it is all zeros).
func Normalize(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return v
	}
	n := math.Sqrt(ss)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}
