package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/search"
)

// registerSearch adds POST /search and POST /search/:id/feedback (see docs/search.md).
func (s *Server) registerSearch(e *echo.Echo) {
	e.POST("/search", s.search)
	e.POST("/search/:id/feedback", s.searchFeedback)
}

func (s *Server) search(c echo.Context) error {
	if s.deps.Search == nil {
		return errors.New("search service not configured")
	}
	var req search.Request
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	req.Endpoint = search.EndpointREST
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	release, err := s.fair.acquireFor(c, caller, searchCost(req), 0)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	resp, err := s.deps.Search.Search(c.Request().Context(), caller, req)
	if err != nil {
		return err
	}
	// Every branch runs inside one statement: the parts timed are the query embedding (the
	// vector branch's own work), the statement, a plan's merge and the rerank, the log row
	// and the whole search.
	mode, t := string(resp.Mode), resp.Timings
	if t.Embed > 0 {
		s.deps.Metrics.ObserveSearch(mode, "embed", t.Embed)
	}
	s.deps.Metrics.ObserveSearch(mode, "statement", t.Statement)
	if resp.Plan != nil || resp.Rerank != nil {
		s.deps.Metrics.ObserveSearch(mode, "rerank", t.Rerank)
	}
	s.deps.Metrics.ObserveSearch(mode, "log", t.Log)
	s.deps.Metrics.ObserveSearch(mode, "total", time.Since(start))
	s.deps.Metrics.ObserveSearchServed(metrics.EndpointREST, mode, resp.Profile, len(resp.Results), resp.NoGoodMatch)
	if body, ok := vendorAnswer(req, resp); ok {
		c.Response().Header().Set(searchIDHeader, strconv.FormatInt(resp.SearchID, 10))
		return c.JSON(http.StatusOK, body)
	}
	return c.JSON(http.StatusOK, resp)
}

type feedbackBody struct {
	Tools []search.Feedback `json:"tools"`
}

func (s *Server) searchFeedback(c echo.Context) error {
	if s.deps.Search == nil {
		return errors.New("search service not configured")
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return notFound("search %q not found", c.Param("id"))
	}
	var body feedbackBody
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	recorded, err := s.deps.Search.RecordFeedback(c.Request().Context(), caller, id, body.Tools)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"search_id": id, "recorded": recorded})
}
