package embed

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/provider"
)

func TestOpenAIBatchesAndOrders(t *testing.T) {
	var calls atomic.Int64
	var sawDims atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req embeddingsRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		sawDims.Store(int64(req.Dimensions))
		if len(req.Input) > 3 {
			w.WriteHeader(400)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		// answer in reverse order: the client must place vectors by index
		for i := len(req.Input) - 1; i >= 0; i-- {
			v := make([]float32, 4)
			v[len(req.Input[i])%4] = 2
			data = append(data, item{i, v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)}})
	}))
	defer srv.Close()
	o := NewOpenAI(OpenAIConfig{Provider: provider.Config{BaseURL: srv.URL + "/v1"}, Model: "m", Dims: 4, SendDimensions: true, MaxBatch: 3})
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"}
	vs, u, err := o.EmbedWithUsage(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || u.PromptTokens != 7 || sawDims.Load() != 4 || o.Model() != "openai:m@4" {
		t.Fatalf("calls %d usage %+v dims %d model %s", calls.Load(), u, sawDims.Load(), o.Model())
	}
	for i, s := range texts {
		if vs[i][len(s)%4] != 1 {
			t.Fatalf("vector %d misplaced or not normalized: %v", i, vs[i])
		}
	}
}

func TestOpenAIWrongDims(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[1,0]}]}`))
	}))
	defer srv.Close()
	o := NewOpenAI(OpenAIConfig{Provider: provider.Config{BaseURL: srv.URL}, Model: "m", Dims: 3})
	var br *provider.BadResponseError
	if _, err := o.Embed(context.Background(), []string{"x"}); !errors.As(err, &br) {
		t.Fatalf("want BadResponseError, got %v", err)
	}
}
