package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// POST /search says how sure it is: confidence and no_good_match on the answer, confidence
// on each result; a search that finds nothing is no good match with confidence 0.
func TestSearchConfidenceFields(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{
		testfactory.Tool("get_stock_price", "Latest stock price of a ticker"), testfactory.Tool("send_email", "Send an email"),
	}, nil)
	log := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Open: true, Search: search.New(pool, nil, search.DefaultSettings(), log)}))
	defer srv.Close()
	post := func(body string) map[string]any {
		t.Helper()
		resp, err := http.Post(srv.URL+"/search", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %v", resp.StatusCode, err)
		}
		return m
	}
	m := post(`{"query":"latest stock price","k":2,"mode":"lexical"}`)
	if c, ok := m["confidence"].(float64); !ok || c <= 0 || c > 1 {
		t.Fatalf("confidence %v", m["confidence"])
	}
	if _, ok := m["no_good_match"].(bool); !ok {
		t.Fatalf("no_good_match %v", m["no_good_match"])
	}
	first := m["results"].([]any)[0].(map[string]any)
	if c, ok := first["confidence"].(float64); !ok || c <= 0 || c > 1 {
		t.Fatalf("result confidence %v", first)
	}
	none := post(`{"query":"zzqx qqwv","mode":"lexical"}`)
	if none["confidence"] != 0.0 || none["no_good_match"] != true || len(none["results"].([]any)) != 0 {
		t.Fatalf("no results: %v", none)
	}
}
