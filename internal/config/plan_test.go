package config

import (
	"errors"
	"testing"
	"time"
)

func TestPlanRerankDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Planner != "heuristic" || c.PlanTimeout != 3*time.Second || c.Reranker != "none" || c.RerankStyle != "cohere" ||
		c.RerankTopN != 30 || c.RerankTimeout != 2*time.Second || c.RerankURL != "" {
		t.Errorf("defaults %+v", c)
	}
}

func TestPlanRerankSettings(t *testing.T) {
	c, err := Load(env(map[string]string{
		"TOOLGATE_PLANNER": "llm", "TOOLGATE_PLAN_TIMEOUT": "1500ms", "TOOLGATE_PLAN_VOCABULARY": "/etc/toolgate/vocabulary.json", "TOOLGATE_RERANKER": "http",
		"TOOLGATE_RERANK_URL": "http://tei:8080/rerank", "TOOLGATE_RERANK_KEY": "k", "TOOLGATE_RERANK_MODEL": "m",
		"TOOLGATE_RERANK_STYLE": "tei", "TOOLGATE_RERANK_TOP_N": "50", "TOOLGATE_RERANK_TIMEOUT": "800ms",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Planner != "llm" || c.PlanTimeout != 1500*time.Millisecond || c.PlanVocabulary != "/etc/toolgate/vocabulary.json" || c.Reranker != "http" || c.RerankURL != "http://tei:8080/rerank" ||
		c.RerankKey != "k" || c.RerankModel != "m" || c.RerankStyle != "tei" || c.RerankTopN != 50 || c.RerankTimeout != 800*time.Millisecond {
		t.Errorf("settings %+v", c)
	}
}

func TestPlanRerankBadSettings(t *testing.T) {
	cases := map[string]map[string]string{
		"TOOLGATE_PLANNER":        {"TOOLGATE_PLANNER": "gpt"},
		"TOOLGATE_PLAN_TIMEOUT":   {"TOOLGATE_PLAN_TIMEOUT": "-1s"},
		"TOOLGATE_RERANKER":       {"TOOLGATE_RERANKER": "cohere"},
		"TOOLGATE_RERANK_URL":     {"TOOLGATE_RERANKER": "http", "TOOLGATE_RERANK_URL": "tei:8080"},
		"TOOLGATE_RERANK_STYLE":   {"TOOLGATE_RERANK_STYLE": "voyage"},
		"TOOLGATE_RERANK_TOP_N":   {"TOOLGATE_RERANK_TOP_N": "0"},
		"TOOLGATE_RERANK_TIMEOUT": {"TOOLGATE_RERANK_TIMEOUT": "fast"},
	}
	for setting, kv := range cases {
		_, err := Load(env(kv))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Errorf("%v: got %v, want an error naming %s", kv, err, setting)
		}
	}
	// The http reranker needs a URL; the others do not.
	if _, err := Load(env(map[string]string{"TOOLGATE_RERANKER": "http"})); err == nil {
		t.Error("http reranker without URL: no error")
	}
	if _, err := Load(env(map[string]string{"TOOLGATE_RERANKER": "llm"})); err != nil {
		t.Errorf("llm reranker without URL: %v", err)
	}
}
