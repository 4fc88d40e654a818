package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/analytics"
)

// registerAnalytics registers the search analytics under /admin (docs/analytics.md): GET
// only, JSON, an admin key (or open mode) like every /admin route. Each reads the SQL
// function its psql view reads.
func (s *Server) registerAnalytics(g *echo.Group) {
	g.GET("/analytics/searches", analyticsHandler(s, "buckets", analytics.Searches))
	g.GET("/analytics/latency", analyticsHandler(s, "buckets", analytics.Latency))
	g.GET("/analytics/zero-results", analyticsHandler(s, "queries", analytics.ZeroResults))
	g.GET("/analytics/low-score", analyticsHandler(s, "queries", analytics.LowScore))
	g.GET("/analytics/profiles", analyticsHandler(s, "days", analytics.Profiles))
	g.GET("/analytics/learning", s.analyticsLearning)
	g.GET("/analytics/slowest", analyticsHandler(s, "searches", analytics.Slowest))
	g.GET("/analytics/top-queries", analyticsHandler(s, "queries", analytics.TopQueries))
	g.GET("/analytics/tools", s.analyticsTools)
	g.GET("/searches", s.recentSearches)
	g.GET("/searches/:id", s.loggedSearch)
}

// recentSearches is GET /admin/searches?q=&days=&limit=: the logged searches of the query
// q (all searches without q), newest first.
func (s *Server) recentSearches(c echo.Context) error {
	p, err := analytics.ParseParams(c.QueryParam)
	if err != nil {
		return err
	}
	rows, err := analytics.RecentSearches(c.Request().Context(), s.deps.Pool, c.QueryParam("q"), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"searches": rows})
}

// loggedSearch is GET /admin/searches/{id}: one logged search, its results, its labels
// and its session's later searches.
func (s *Server) loggedSearch(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return notFound("search %q not found", c.Param("id"))
	}
	d, err := analytics.Search(c.Request().Context(), s.deps.Pool, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// analyticsHandler answers {key: answer(params)}, the params read from the query string
// (400 invalid_param when one is malformed or out of range).
func analyticsHandler[T any](s *Server, key string, answer func(context.Context, *pgxpool.Pool, analytics.Params) ([]T, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := analytics.ParseParams(c.QueryParam)
		if err != nil {
			return err
		}
		rows, err := answer(c.Request().Context(), s.deps.Pool, p)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{key: rows})
	}
}

func (s *Server) analyticsLearning(c echo.Context) error {
	p, err := analytics.ParseParams(c.QueryParam)
	if err != nil {
		return err
	}
	answer, err := analytics.Learning(c.Request().Context(), s.deps.Pool, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, answer)
}

func (s *Server) analyticsTools(c echo.Context) error {
	p, err := analytics.ParseParams(c.QueryParam)
	if err != nil {
		return err
	}
	lists, err := analytics.Tools(c.Request().Context(), s.deps.Pool, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, lists)
}
