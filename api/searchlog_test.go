package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSearchLogFollowsASearch: GET /admin/searches lists the searches of a query with
// their labels, and GET /admin/searches/{id} shows one with what it returned, what the
// agent then called (an MCP call_tool after find_tools, with its outcome) and what its
// session searched next; a REST search's feedback is its label. An id the log does not
// hold is 404.
func TestSearchLogFollowsASearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAnalyticsEnv(t)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{key: e.search}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	find := func(query string) int64 {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": query, "limit": 3}})
		if err != nil || res.IsError {
			t.Fatalf("find_tools: %v %+v", err, res)
		}
		var found struct {
			SearchID int64 `json:"search_id"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &found); err != nil {
			t.Fatal(err)
		}
		return found.SearchID
	}
	const query = "weather forecast for a city"
	first := find(query)
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "market__get_weather", Arguments: map[string]any{"city": "Paris"}}); err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	e.waitLabel(t, "market__get_weather")
	next := find("send an email message")

	// A REST search of the same query, with feedback.
	var rest struct {
		SearchID int64 `json:"search_id"`
	}
	if code := e.do(t, http.MethodPost, "/search", e.search, fmt.Sprintf(`{"query":%q}`, query), &rest); code != http.StatusOK {
		t.Fatalf("search: %d", code)
	}
	if code := e.do(t, http.MethodPost, fmt.Sprintf("/search/%d/feedback", rest.SearchID), e.search,
		`{"tools":[{"name":"market__get_air_quality","success":false}]}`, nil); code != http.StatusCreated {
		t.Fatalf("feedback: %d", code)
	}

	var list struct {
		Searches []struct {
			ID       int64  `json:"id"`
			Query    string `json:"query"`
			Endpoint string `json:"endpoint"`
			Labels   int64  `json:"labels"`
			BestRank *int32 `json:"best_rank"`
		} `json:"searches"`
	}
	if code := e.do(t, http.MethodGet, "/admin/searches?days=1&q="+url.QueryEscape(query), e.admin, "", &list); code != http.StatusOK {
		t.Fatalf("GET /admin/searches: %d", code)
	}
	if len(list.Searches) != 2 || list.Searches[0].ID != rest.SearchID || list.Searches[1].ID != first {
		t.Fatalf("searches of %q: %+v, want the REST one then the find_tools one", query, list.Searches)
	}
	if s := list.Searches[1]; s.Endpoint != "find_tools" || s.Labels != 1 || s.BestRank == nil || *s.BestRank != 1 {
		t.Errorf("the find_tools search in the list: %+v", s)
	}
	if s := list.Searches[0]; s.Endpoint != "rest" || s.Labels != 1 || s.BestRank == nil || *s.BestRank != 2 {
		t.Errorf("the REST search in the list: %+v (want its feedback at rank 2)", s)
	}
	var all struct {
		Searches []json.RawMessage `json:"searches"`
	}
	e.do(t, http.MethodGet, "/admin/searches?days=1", e.admin, "", &all)
	if len(all.Searches) != 3 {
		t.Errorf("all searches: %d, want 3", len(all.Searches))
	}

	var d struct {
		Query   string `json:"query"`
		Results []struct {
			Name  string  `json:"name"`
			Score float64 `json:"score"`
		} `json:"results"`
		Labels []struct {
			Tool    string `json:"tool"`
			Source  string `json:"source"`
			Rank    int    `json:"rank"`
			Success *bool  `json:"success"`
		} `json:"labels"`
		Later []struct {
			ID    int64  `json:"id"`
			Query string `json:"query"`
		} `json:"later"`
	}
	if code := e.do(t, http.MethodGet, fmt.Sprintf("/admin/searches/%d", first), e.admin, "", &d); code != http.StatusOK {
		t.Fatalf("GET /admin/searches/%d: %d", first, code)
	}
	if d.Query != query || len(d.Results) != 3 || d.Results[0].Name != "market__get_weather" || d.Results[0].Score <= 0 {
		t.Errorf("the search: %+v", d)
	}
	if len(d.Labels) != 1 || d.Labels[0].Tool != "market__get_weather" || d.Labels[0].Source != "call" || d.Labels[0].Rank != 1 ||
		d.Labels[0].Success == nil || !*d.Labels[0].Success {
		t.Errorf("labels: %+v", d.Labels)
	}
	if len(d.Later) != 1 || d.Later[0].ID != next || d.Later[0].Query != "send an email message" {
		t.Errorf("the session's later searches: %+v, want search %d", d.Later, next)
	}

	var body map[string]any
	if code := e.do(t, http.MethodGet, "/admin/searches/999999", e.admin, "", &body); code != http.StatusNotFound || errorCode(body) != "not_found" {
		t.Errorf("an unknown search: %d %v", code, body)
	}
}
