package evalrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/search"
)

// curveServer is the HTTP API of toolgate (api.New) on a loopback port of this process,
// with its search service, for a learning curve's agents to call as a deployment's do.
type curveServer struct {
	url  string
	keys *auth.Keys
	// original maps a catalog name to the tool's name in the dataset
	original map[string]string
	srv      *http.Server
	client   *http.Client
	done     chan struct{}
}

func startCurveServer(ctx context.Context, pool *pgxpool.Pool, svc *search.Service, open bool, tools []catalog.Tool) (*curveServer, error) {
	original := make(map[string]string, len(tools))
	for _, t := range tools {
		original[catalog.ToolName(evalSource, t.Name)] = t.Name
	}
	keys := auth.NewKeys(pool, time.Now)
	// the server logs every request at info: its errors come back in the answers
	h := api.New(api.Deps{Pool: pool, Search: svc, Keys: keys, Open: open, Logger: slog.New(slog.DiscardHandler)})
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the curve's server: %w", err)
	}
	s := &curveServer{url: "http://" + ln.Addr().String(), keys: keys, original: original, done: make(chan struct{}),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, client: &http.Client{}}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // ends with http.ErrServerClosed at close
	}()
	return s, nil
}

func (s *curveServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
	s.client.CloseIdleConnections()
}

// searchAnswer is what a curve reads of POST /search's answer.
type searchAnswer struct {
	SearchID int64 `json:"search_id"`
	Results  []struct {
		Name string `json:"name"`
	} `json:"results"`
}

// post sends body as JSON to path as caller cl and decodes the answer into out; an answer
// other than want is an error with its body.
func (s *curveServer) post(ctx context.Context, cl curveCaller, path string, body any, want int, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if cl.token != "" {
		req.Header.Set("Authorization", "Bearer "+cl.token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}

// replay makes each query's search as caller cl, as an agent would (k results), and then
// reports the gold tools among the results as used (POST /search/{id}/feedback, success
// true). It returns how many searches it labelled.
func (s *curveServer) replay(ctx context.Context, cl curveCaller, base search.Request, k int, qs []eval.Query) (int, error) {
	labelled, ok := 0, true
	for _, q := range qs {
		req := base
		req.Query, req.K = q.Query, k
		var ans searchAnswer
		if err := s.post(ctx, cl, "/search", req, http.StatusOK, &ans); err != nil {
			return labelled, err
		}
		var used []search.Feedback
		for _, r := range ans.Results {
			if slices.Contains(q.Gold, s.original[r.Name]) {
				used = append(used, search.Feedback{Name: r.Name, Success: &ok})
			}
		}
		if len(used) == 0 {
			continue
		}
		var rec map[string]any
		if err := s.post(ctx, cl, fmt.Sprintf("/search/%d/feedback", ans.SearchID), map[string]any{"tools": used}, http.StatusCreated, &rec); err != nil {
			return labelled, err
		}
		labelled++
	}
	return labelled, nil
}

// searchFunc ranks through POST /search as caller cl and returns the tools' names as the
// dataset spells them.
func (s *curveServer) searchFunc(cl curveCaller, base search.Request) eval.SearchFunc {
	return func(ctx context.Context, query string, k int) ([]string, error) {
		req := base
		req.Query, req.K = query, k
		var ans searchAnswer
		if err := s.post(ctx, cl, "/search", req, http.StatusOK, &ans); err != nil {
			return nil, err
		}
		names := make([]string, len(ans.Results))
		for i, r := range ans.Results {
			names[i] = s.original[r.Name]
		}
		return names, nil
	}
}
