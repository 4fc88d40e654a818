package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/tdwa"
)

func (s *Server) registerTools(g *echo.Group) {
	g.GET("/tools/:name", s.getTool)
}

// toolView is one tool with its enrichment, as GET /v1/tools/:name shows it.
type toolView struct {
	Name         string          `json:"name"`
	OriginalName string          `json:"original_name"`
	Source       string          `json:"source"`
	Title        *string         `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	ContentHash  string          `json:"content_hash"`
	Enabled      bool            `json:"enabled"`
	ReviewState  db.ReviewState  `json:"review_state"`
	Enrichment   enrichmentView  `json:"enrichment"`
	// Profile is the Tool-DE tool_profile; null when not generated yet or when it failed its
	// faithfulness judgement (the original document is then used alone).
	Profile    *enrich.Profile `json:"profile"`
	Questions  []string        `json:"questions"`
	Topics     []string        `json:"topics"`
	Components []componentView `json:"components"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

type enrichmentView struct {
	// Status is "enriched" when every step is done for the current definition and the tool
	// has a vector in the active profile's vector set, "pending" otherwise.
	Status    string     `json:"status"`
	HasVector bool       `json:"has_vector"`
	Steps     []stepView `json:"steps"`
}

type stepView struct {
	Step             string    `json:"step"`
	Model            string    `json:"model"`
	Current          bool      `json:"current"` // produced for the current definition
	PromptTokens     int32     `json:"prompt_tokens"`
	CompletionTokens int32     `json:"completion_tokens"`
	CreatedAt        time.Time `json:"created_at"`
	// Failed is why the step's output was malformed beyond repair (the tool was stored
	// without it); absent when the step has an output.
	Failed string `json:"failed,omitempty"`
}

type componentView struct {
	Kind         string    `json:"kind"`
	Ordinal      int32     `json:"ordinal"`
	Text         string    `json:"text"`
	Model        *string   `json:"model"`
	HasEmbedding bool      `json:"has_embedding"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func (s *Server) getTool(c echo.Context) error {
	ctx := c.Request().Context()
	st, err := enrich.LoadTool(ctx, s.deps.Pool, c.Param("name"))
	if err != nil {
		return err
	}
	t := st.Tool
	src, _, _ := catalog.SplitNamespaced(t.Name)
	v := toolView{
		Name: t.Name, OriginalName: t.OriginalName, Source: src, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations, ContentHash: t.ContentHash,
		Enabled: t.Enabled, ReviewState: t.ReviewState, Questions: []string{}, Topics: []string{},
		Components: []componentView{}, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
	current := 0
	v.Enrichment.Steps = []stepView{}
	for _, e := range st.Steps {
		sv := stepView{Step: e.Step, Model: e.Model, Current: e.ContentHash == t.ContentHash,
			PromptTokens: e.PromptTokens, CompletionTokens: e.CompletionTokens, CreatedAt: e.CreatedAt}
		var failed struct {
			Failed string `json:"failed"`
		}
		if json.Unmarshal(e.Output, &failed) == nil {
			sv.Failed = failed.Failed
		}
		v.Enrichment.Steps = append(v.Enrichment.Steps, sv)
		if !sv.Current {
			continue
		}
		current++
		// Outputs were validated when stored; one that does not decode is shown as absent.
		switch e.Step {
		case enrich.StepProfile:
			var o struct {
				Profile *enrich.Profile `json:"tool_profile"`
			}
			if json.Unmarshal(e.Output, &o) == nil {
				v.Profile = o.Profile
			}
		case enrich.StepQuestions:
			var o struct {
				Questions []string `json:"questions"`
			}
			if json.Unmarshal(e.Output, &o) == nil && o.Questions != nil {
				v.Questions = o.Questions
			}
		case enrich.StepTopics:
			var o struct {
				Topics []string `json:"topics"`
			}
			if json.Unmarshal(e.Output, &o) == nil && o.Topics != nil {
				v.Topics = o.Topics
			}
		}
	}
	v.Enrichment.HasVector = st.HasVector
	v.Enrichment.Status = "pending"
	if current == 3 && v.Enrichment.HasVector {
		v.Enrichment.Status = "enriched"
	}
	// Observed queries are other callers' words: only an admin sees them (the route is
	// admin-only today; this holds if it is ever opened to search keys).
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	admin := caller.Scope.Allows(auth.ScopeAdmin)
	for _, cp := range st.Components {
		if cp.Kind == tdwa.KindObserved && !admin {
			continue
		}
		v.Components = append(v.Components, componentView(cp))
	}
	return c.JSON(http.StatusOK, v)
}
