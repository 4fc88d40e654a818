package config

import "net/url"

// validatePlanRerank checks the query planner and reranker settings (docs/planning.md).
func (c Config) validatePlanRerank() error {
	switch c.Planner {
	case "heuristic", "llm":
	default:
		return &Error{"TOOLGATE_PLANNER", c.Planner, "want heuristic or llm"}
	}
	switch c.Reranker {
	case "none", "llm":
	case "http":
		if u, err := url.Parse(c.RerankURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &Error{"TOOLGATE_RERANK_URL", c.RerankURL, "the http reranker needs the full http(s) URL of a /rerank endpoint"}
		}
	default:
		return &Error{"TOOLGATE_RERANKER", c.Reranker, "want none, http or llm"}
	}
	switch c.RerankStyle {
	case "cohere", "jina", "tei":
	default:
		return &Error{"TOOLGATE_RERANK_STYLE", c.RerankStyle, "want cohere, jina or tei"}
	}
	return nil
}
