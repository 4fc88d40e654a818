package api

import (
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/curations"
)

// registerCurations adds the query rules, the synonyms and the per-tool expansion switch
// under /admin (docs/curations.md).
func (s *Server) registerCurations(g *echo.Group) {
	g.GET("/rules", s.listRules)
	g.POST("/rules", s.createRule)
	g.DELETE("/rules/:id", s.deleteRule)
	g.GET("/synonyms", s.listSynonyms)
	g.POST("/synonyms", s.putSynonyms)
	g.DELETE("/synonyms/:id", s.deleteSynonyms)
	g.POST("/tools/:name/expansion/off", s.setExpansionOff(true))
	g.POST("/tools/:name/expansion/on", s.setExpansionOff(false))
}

func (s *Server) curations() *curations.Service { return &curations.Service{Pool: s.deps.Pool} }

func (s *Server) listRules(c echo.Context) error {
	list, err := s.curations().Rules(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"rules": list})
}

func (s *Server) createRule(c echo.Context) error {
	var r curations.Rule
	if err := decodeJSON(c, &r); err != nil {
		return err
	}
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	out, err := s.curations().CreateRule(c.Request().Context(), r, caller.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Server) deleteRule(c echo.Context) error {
	id, err := curationID(c)
	if err != nil {
		return err
	}
	if err := s.curations().DeleteRule(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) listSynonyms(c echo.Context) error {
	list, err := s.curations().Synonyms(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"synonyms": list})
}

func (s *Server) putSynonyms(c echo.Context) error {
	var in curations.Synonyms
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	out, err := s.curations().PutSynonyms(c.Request().Context(), in, caller.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) deleteSynonyms(c echo.Context) error {
	id, err := curationID(c)
	if err != nil {
		return err
	}
	if err := s.curations().DeleteSynonyms(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// setExpansionOff switches a tool's knowledge expansion off or on and queues its enrichment,
// which applies the switch, in the same transaction.
func (s *Server) setExpansionOff(off bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		name := c.Param("name")
		err := pgx.BeginFunc(ctx, s.deps.Pool, func(tx pgx.Tx) error {
			id, err := (&curations.Service{Pool: s.deps.Pool}).SetExpansionOffTx(ctx, tx, name, off)
			if err != nil {
				return err
			}
			return s.queue.EnrichTx(ctx, tx, []int64{id})
		})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"tool": name, "expansion_off": off})
	}
}

func curationID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest("id must be a positive integer, got %q", c.Param("id"))
	}
	return id, nil
}
