package config

import (
	"errors"
	"testing"
	"time"
)

func TestSearchSettings(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.SearchStmtTimeout != 5*time.Second || c.SearchKRRF != 60 || c.SearchWeightLexical != 1.5 || c.SearchFusion != "minmax" ||
		c.SearchWeightVector != 1 || c.SearchEfSearch != 40 || c.SearchCandidates != 20 || c.SearchPostings != 30 {
		t.Errorf("search defaults: %+v", c)
	}
	c, err = Load(env(map[string]string{"TOOLGATE_SEARCH_STATEMENT_TIMEOUT": "off", "TOOLGATE_SEARCH_POSTINGS": "500", "TOOLGATE_SEARCH_FUSION": "dbsf"}))
	if err != nil || c.SearchStmtTimeout >= 0 || c.SearchPostings != 500 || c.SearchFusion != "dbsf" {
		t.Errorf("set: %+v, %v", c, err)
	}
	for setting, value := range map[string]string{
		// no longer settings: BM25's k1 and b are fixed with the index's impacts
		"TOOLGATE_SEARCH_BM25_K1":           "1.2",
		"TOOLGATE_SEARCH_BM25_B":            "0.75",
		"TOOLGATE_SEARCH_STATEMENT_TIMEOUT": "soon",
		"TOOLGATE_SEARCH_RRF_K":             "sixty",
		"TOOLGATE_SEARCH_WEIGHT_LEXICAL":    "-0.5",
		"TOOLGATE_SEARCH_WEIGHT_VECTOR":     "x",
		"TOOLGATE_SEARCH_EF_SEARCH":         "5",
		"TOOLGATE_SEARCH_CANDIDATES":        "0",
		"TOOLGATE_SEARCH_POSTINGS":          "0",
		"TOOLGATE_SEARCH_FUSION":            "borda",
	} {
		_, err := Load(env(map[string]string{setting: value}))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Errorf("%s=%s: got %v", setting, value, err)
		}
	}
}
