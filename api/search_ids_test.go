package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestSearchIDsSayNothingOfVolume: the ids of one key's consecutive searches are neither
// consecutive nor increasing, so that subtracting two says nothing of how many searches
// the platform answered in between; each is still an integer JSON carries exactly, and
// feedback on it works for its key alone. Before, search ids were the sequence itself:
// 20 searches of one key gave 20 consecutive ids.
func TestSearchIDsSayNothingOfVolume(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker")}, nil)
	keys := auth.NewKeys(pool, time.Now)
	_, a, err := keys.Create(ctx, auth.Spec{Name: "agent-a", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := keys.Create(ctx, auth.Spec{Name: "agent-b", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Keys: keys, Search: search.New(pool, nil, search.DefaultSettings(), log)}))
	defer srv.Close()
	post := func(key, path, body string) (int, map[string]json.Number) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		dec := json.NewDecoder(resp.Body)
		dec.UseNumber()
		_ = dec.Decode(&m)
		out := map[string]json.Number{}
		for k, v := range m {
			if n, ok := v.(json.Number); ok {
				out[k] = n
			}
		}
		return resp.StatusCode, out
	}
	var ids []int64
	for range 20 {
		code, m := post(a, "/search", `{"query":"stock price","mode":"lexical"}`)
		id, err := m["search_id"].Int64()
		if code != 200 || err != nil {
			t.Fatalf("search: %d %v %v", code, m, err)
		}
		if id <= 0 || id > 1<<53 {
			t.Fatalf("search id %d is not an integer a JSON number holds exactly", id)
		}
		ids = append(ids, id)
	}
	increasing := 0
	for i := 1; i < len(ids); i++ {
		if d := ids[i] - ids[i-1]; d == 1 || d == -1 {
			t.Fatalf("consecutive searches have consecutive ids: %v", ids)
		} else if d > 0 {
			increasing++
		}
	}
	if increasing == len(ids)-1 {
		t.Fatalf("the ids of 20 consecutive searches increase: %v", ids)
	}
	path := "/search/" + strconv.FormatInt(ids[len(ids)-1], 10) + "/feedback"
	body := `{"tools":[{"name":"acme__get_stock_price","success":true}]}`
	if code, m := post(b, path, body); code != 404 {
		t.Errorf("another key's feedback: %d %v, want 404", code, m)
	}
	if code, m := post(a, path, body); code != 201 {
		t.Errorf("the searcher's feedback: %d %v", code, m)
	}
}
