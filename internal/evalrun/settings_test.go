package evalrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/rerank"
	"github.com/toolgate/toolgate/internal/search"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func defaultConfig(t *testing.T) config.Config {
	t.Helper()
	c, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every field of search.Settings is in the report, under its settingName, with a real value:
// a field added later (a fusion method, a new weight) is reported by reflection, and one
// that holds a component eval does not describe fails here.
func TestEvalSettingsRecord(t *testing.T) {
	rec := SettingsRecord(search.DefaultSettings(), evalComponents(defaultConfig(t), 0))
	typ := reflect.TypeFor[search.Settings]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		v, ok := rec[settingName(f.Name)]
		if !ok {
			t.Errorf("search.Settings.%s is not reported (want key %q)", f.Name, settingName(f.Name))
			continue
		}
		if s, ok := v.(string); ok && strings.HasPrefix(s, unreported) {
			t.Errorf("search.Settings.%s holds a component the report cannot show (%s): describe it in evalComponents", f.Name, s)
		}
	}
	if len(rec) != typ.NumField() {
		t.Errorf("record has %d keys for %d fields: %v", len(rec), typ.NumField(), rec)
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"k_rrf":60`, `"ef_search":40`, `"embed_timeout":"2s"`, `"planner":{"name":"heuristic","vocabulary":null,"vocabulary_entries":0}`, `"reranker":{"kind":"none"}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("record lacks %s: %s", want, raw)
		}
	}

	// The check above does catch a component nobody described.
	type withComponent struct {
		K      float64
		Fusion interface{ Fuse() }
	}
	if got := SettingsRecord(withComponent{K: 1}, nil)["fusion"]; got != unreported+"interface { Fuse() }" {
		t.Fatalf("undescribed component reported as %v", got)
	}
}

func TestSettingName(t *testing.T) {
	for in, want := range map[string]string{"K1": "k1", "B": "b", "KRRF": "k_rrf", "EfSearch": "ef_search",
		"RerankTopN": "rerank_top_n", "WeightLexical": "weight_lexical", "HTTPServer": "http_server", "Fusion": "fusion"} {
		if got := settingName(in); got != want {
			t.Errorf("settingName(%s) = %s, want %s", in, got, want)
		}
	}
}

// Every --set key sets the reported field of its name: the report's own value round-trips,
// and a new value shows under that key and nowhere else.
func TestEvalSettingKeys(t *testing.T) {
	components := evalComponents(defaultConfig(t), 0)
	def := SettingsRecord(search.DefaultSettings(), components)
	for key := range evalSettingKeys {
		v, ok := def[key]
		if !ok {
			t.Errorf("--set %s: no reported field of that name", key)
			continue
		}
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.String && rv.Len() == 0 {
			continue // an empty string means the setting's default (fusion: rrf), not a value to set
		}
		st := search.DefaultSettings()
		if err := evalSettingKeys[key](&st, fmt.Sprint(v)); err != nil {
			t.Errorf("--set %s=%v (the reported default): %v", key, v, err)
		}
		if got := SettingsRecord(st, components); !reflect.DeepEqual(got, def) {
			t.Errorf("--set %s=%v changed the record: %v", key, v, got)
		}
	}
	for _, c := range []struct {
		key, value string
		want       any
	}{
		{"k_rrf", "30", 30.0}, {"weight_vector", "0.5", 0.5}, {"candidates", "7", 7}, {"postings", "1", 1},
		{"lexical_terms", "3", 3}, {"ef_search", "100", 100}, {"vector_confidence", "0.9", 0.9}, {"weight_meaning", "0", 0.0},
		{"embed_timeout", "500ms", "500ms"}, {"rerank_top_n", "10", 10},
		{"fusion", "dbsf", search.FusionDBSF}, {"query_idf", "true", true},
	} {
		st := applySettings(search.DefaultSettings(), []SettingChange{{c.key, c.value}})
		got := SettingsRecord(st, components)
		if got[c.key] != c.want {
			t.Errorf("--set %s=%s: reported %v, want %v", c.key, c.value, got[c.key], c.want)
		}
		for k, v := range got {
			if k != c.key && !reflect.DeepEqual(v, def[k]) {
				t.Errorf("--set %s=%s also changed %s to %v", c.key, c.value, k, v)
			}
		}
	}
}

func TestSettingVariations(t *testing.T) {
	base, vars, err := ParseSettings([]string{"candidates=30"}, []string{"k_rrf=10,60", "weight_vector=0, 0.5,1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(base) != 1 || base[0] != (SettingChange{"candidates", "30"}) {
		t.Fatalf("base %v", base)
	}
	var labels []string
	for _, v := range vars {
		labels = append(labels, changesLabel(v))
	}
	want := []string{"k_rrf=10 weight_vector=0", "k_rrf=10 weight_vector=0.5", "k_rrf=10 weight_vector=1",
		"k_rrf=60 weight_vector=0", "k_rrf=60 weight_vector=0.5", "k_rrf=60 weight_vector=1"}
	if !reflect.DeepEqual(labels, want) {
		t.Fatalf("variations %q, want %q", labels, want)
	}
	if _, vars, err := ParseSettings(nil, nil); err != nil || len(vars) != 1 || vars[0] != nil {
		t.Fatalf("no --vary: %v, %v; want one configuration without changes", vars, err)
	}

	for _, c := range []struct {
		sets, varies []string
		want         string
	}{
		{[]string{"fusion_method=rrf"}, nil, `--set: unknown search setting "fusion_method" (have candidates,`},
		{[]string{"fusion=max"}, nil, `--set fusion: "max" is not one of rrf, minmax, dbsf`},
		{[]string{"query_idf=maybe"}, nil, `--set query_idf: "maybe" is not true or false`},
		{[]string{"k_rrf"}, nil, `--set: want key=value, got "k_rrf"`},
		{[]string{"k_rrf=fast"}, nil, `--set k_rrf: "fast" is not a number`},
		{[]string{"vector_confidence=2"}, nil, `--set vector_confidence: 2 is out of range 0..1`},
		{[]string{"candidates=0"}, nil, `--set candidates: 0 is out of range 1..1000`},
		{[]string{"candidates=2.5"}, nil, `--set candidates: "2.5" is not an integer`},
		{[]string{"embed_timeout=0s"}, nil, `--set embed_timeout: "0s" is not a positive duration`},
		{[]string{"k_rrf=1", "k_rrf=2"}, nil, `--set: k_rrf is already given by --set`},
		{[]string{"k_rrf=1"}, []string{"k_rrf=1,2"}, `--vary: k_rrf is already given by --set`},
		{nil, []string{"k_rrf=10,abc"}, `--vary k_rrf: "abc" is not a number`},
		{nil, []string{"k_rrf=10,10"}, `--vary k_rrf: 10 is given twice`},
		{nil, []string{"k_rrf="}, `--vary: want key=v1,v2,..., got "k_rrf="`},
		{nil, []string{"nope=1,2"}, `--vary: unknown search setting "nope"`},
	} {
		_, _, err := ParseSettings(c.sets, c.varies)
		var ue *OptionError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("set %q vary %q: %v, want a one-line usage error starting %q", c.sets, c.varies, err, c.want)
		}
	}
}

// oneOf reads the values of a string-typed setting, as a fusion method would be.
func TestOneOf(t *testing.T) {
	type fusion string
	parse := oneOf[fusion]("rrf", "dbsf")
	if v, err := parse("dbsf"); err != nil || v != "dbsf" {
		t.Fatalf("%v, %v", v, err)
	}
	if _, err := parse("max"); err == nil || err.Error() != `"max" is not one of rrf, dbsf` {
		t.Fatalf("bad value: %v", err)
	}
}

// One search serves every K only when its top K cannot depend on k.
func TestEvalPerK(t *testing.T) {
	st := search.DefaultSettings() // 20 candidates
	reranked := st
	reranked.Reranker = rerank.NewLLM(nil)
	for _, c := range []struct {
		name string
		st   search.Settings
		plan plan.Mode
		ks   []int
		want bool
	}{
		{"unplanned", st, plan.ModeNone, []int{1, 5, 10}, false},
		{"unplanned, K up to the candidates", st, plan.ModeNone, []int{1, 20}, false},
		{"K above the candidates", st, plan.ModeNone, []int{5, 21}, true},
		{"rewrite", st, plan.ModeRewrite, []int{1, 5, 10}, true},
		{"decompose", st, plan.ModeDecompose, []int{1, 5, 10}, true},
		{"full", st, plan.ModeFull, []int{10}, true},
		{"reranker", reranked, plan.ModeNone, []int{1, 5, 10}, true},
	} {
		if got := evalPerK(c.st, c.plan, c.ks); got != c.want {
			t.Errorf("%s: evalPerK = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPlanStatsWarnings(t *testing.T) {
	c := defaultConfig(t)
	var p planStats
	for range 2 {
		p.add(&plan.Plan{Original: "q", Rewritten: "q", Intents: []plan.Intent{{Query: "q"}}})
	}
	p.add(nil) // a default plan of one task, dropped: a query the planner did not split
	got := p.warnings(plan.ModeDecompose, false, c, 0)
	want := "plan decompose: the planner split 0 of 3 queries; the heuristic planner has no vocabulary, so it splits only requests of several tasks: to split by entity set TOOLGATE_PLAN_VOCABULARY to a JSON file of the catalog's names (docs/planning.md); on queries of one task each the scores are those of --plan none"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("warnings %q, want [%q]", got, want)
	}
	// The default plan, which the run did not ask for, splits what POST /search splits: no warning.
	if got := p.warnings(plan.ModeDecompose, true, c, 0); len(got) != 0 {
		t.Fatalf("the default plan warns: %q", got)
	}
	if got := p.warnings(plan.ModeDecompose, false, c, 12); len(got) != 1 || strings.Contains(got[0], "vocabulary") {
		t.Fatalf("with a vocabulary that split nothing: %q", got)
	}
	if got := p.warnings(plan.ModeRewrite, false, c, 0); len(got) != 1 || !strings.HasPrefix(got[0], "plan rewrite: the planner rewrote 0 of 3 queries") {
		t.Fatalf("rewrite: %q", got)
	}
	p.add(&plan.Plan{Original: "a and b", Rewritten: "A and B", Intents: []plan.Intent{{Query: "A"}, {Query: "B"}}, Fallback: "timeout"})
	if p != (planStats{Queries: 4, Split: 1, Rewritten: 1, Fallbacks: 1}) { // the nil plan counted as a query
		t.Fatalf("stats %+v", p)
	}
	for _, isDefault := range []bool{false, true} {
		if got := p.warnings(plan.ModeFull, isDefault, c, 0); len(got) != 1 || got[0] != "plan full: the LLM planner fell back to the heuristic plan on 1 of 4 queries" {
			t.Fatalf("full (default %v): %q", isDefault, got)
		}
	}
}

// An --out file takes the results of one dataset only, and only after complete reports.
func TestOpenEvalOut(t *testing.T) {
	dir := t.TempDir()
	ds := eval.DatasetInfo{Path: "ds", SHA256: strings.Repeat("a", 64)}
	other := eval.DatasetInfo{Path: "other", SHA256: strings.Repeat("b", 64)}
	path := filepath.Join(dir, "new", "results.jsonl")
	if _, err := openEvalOut(path, ds); err == nil {
		t.Fatal("opened a file in a missing directory")
	}
	path = filepath.Join(dir, "results.jsonl")
	line := func(info eval.DatasetInfo) Line {
		return Line{Run: newRunInfo(context.Background(), nil), Label: "x", Report: eval.Report{NQueries: 1, Dataset: &info}}
	}
	for range 2 { // a new file, then the same dataset again
		out, err := openEvalOut(path, ds)
		if err != nil {
			t.Fatal(err)
		}
		if err := out.write(line(ds)); err != nil {
			t.Fatal(err)
		}
		out.Close()
	}
	raw, _ := os.ReadFile(path)
	if n := strings.Count(string(raw), "\n"); n != 2 {
		t.Fatalf("%d lines after two runs:\n%s", n, raw)
	}
	_, err := openEvalOut(path, other)
	var oe *OutFileError
	if !errors.As(err, &oe) || oe.Line != 1 || !strings.Contains(err.Error(), "holds results of another dataset (ds, sha256 aaaaaaaaaaaa) than other (sha256 bbbbbbbbbbbb)") {
		t.Fatalf("other dataset: %v", err)
	}
	for name, content := range map[string]string{
		"notes.txt":  "my notes\n",
		"cut.jsonl":  string(raw[:len(raw)-1]),
		"half.jsonl": string(raw[:len(raw)/2+len(raw)/4]),
	} {
		p := writeFile(t, dir, name, content)
		if _, err := openEvalOut(p, ds); !errors.As(err, &oe) {
			t.Errorf("%s: %v, want an OutFileError", name, err)
		}
	}
	if _, err := openEvalOut(writeFile(t, dir, "empty.jsonl", ""), ds); err != nil {
		t.Fatalf("empty file: %v", err)
	}
}

func TestToolgateBuild(t *testing.T) {
	b := toolgateBuild(context.Background())
	if b.Version == "" || !strings.HasPrefix(b.Go, "go") {
		t.Fatalf("build %+v", b)
	}
	// Tests run in the toolgate checkout (when there is one, git knows its HEAD).
	if b.Commit != "" && (len(b.Commit) < 40 || b.Modified == nil) {
		t.Fatalf("commit %+v", b)
	}
}
