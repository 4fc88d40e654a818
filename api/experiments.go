package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/experiments"
)

// registerExperiments registers the A/B experiment endpoints under /admin
// (docs/experiments.md).
func (s *Server) registerExperiments(g *echo.Group) {
	g.POST("/experiments", s.startExperiment)
	g.GET("/experiments", s.listExperiments)
	g.GET("/experiments/:name", s.getExperiment)
	g.POST("/experiments/:name/stop", s.stopExperiment)
}

func (s *Server) startExperiment(c echo.Context) error {
	var d experiments.Definition
	if err := decodeJSON(c, &d); err != nil {
		return err
	}
	e, err := experiments.Start(c.Request().Context(), s.deps.Pool, d)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, e)
}

func (s *Server) listExperiments(c echo.Context) error {
	es, err := experiments.List(c.Request().Context(), s.deps.Pool)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"experiments": es})
}

func (s *Server) getExperiment(c echo.Context) error {
	maxPerKey := experiments.DefaultMaxPerKey
	if v := c.QueryParam("max_per_key"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return badRequest("max_per_key must be a positive integer (searches of one search key counted per arm)")
		}
		maxPerKey = n
	}
	r, err := experiments.GetCapped(c.Request().Context(), s.deps.Pool, c.Param("name"), maxPerKey)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

func (s *Server) stopExperiment(c echo.Context) error {
	e, err := experiments.Stop(c.Request().Context(), s.deps.Pool, c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, e)
}
