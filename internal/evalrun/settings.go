package evalrun

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/search"
)

// evalSettingKeys are the search settings `toolgate eval --set` and `--vary` can change:
// the key (the name under which config.search of the report shows the field, see
// settingName) and how a value is parsed into search.Settings. A new tunable setting is
// one line here; TestEvalSettingKeys checks that its key names a reported field.
var evalSettingKeys = map[string]setter{
	"fusion":                field(func(s *search.Settings) *search.Fusion { return &s.Fusion }, oneOf(search.FusionRRF, search.FusionMinMax, search.FusionDBSF)),
	"k_rrf":                 field(func(s *search.Settings) *float64 { return &s.KRRF }, floatIn(0, 10000)),
	"weight_lexical":        field(func(s *search.Settings) *float64 { return &s.WeightLexical }, floatIn(0, 100)),
	"weight_vector":         field(func(s *search.Settings) *float64 { return &s.WeightVector }, floatIn(0, 100)),
	"ef_search":             field(func(s *search.Settings) *int { return &s.EfSearch }, intIn(10, 1000)),
	"candidates":            field(func(s *search.Settings) *int { return &s.Candidates }, intIn(1, 1000)),
	"postings":              field(func(s *search.Settings) *int { return &s.Postings }, intIn(1, 100000)),
	"lexical_terms":         field(func(s *search.Settings) *int { return &s.LexicalTerms }, intIn(1, 1000)),
	"embed_timeout":         field(func(s *search.Settings) *time.Duration { return &s.EmbedTimeout }, positiveDuration),
	"query_idf":             field(func(s *search.Settings) *bool { return &s.QueryIDF }, boolean),
	"vector_confidence":     field(func(s *search.Settings) *float64 { return &s.VectorConfidence }, floatIn(0, 1)),
	"weight_meaning":        field(func(s *search.Settings) *float64 { return &s.WeightMeaning }, floatIn(0, 100)),
	"weight_memory":         field(func(s *search.Settings) *float64 { return &s.WeightMemory }, floatIn(0, 100)),
	"weight_demotion":       field(func(s *search.Settings) *float64 { return &s.WeightDemotion }, floatIn(0, 100)),
	"memory_neighbors":      field(func(s *search.Settings) *int { return &s.MemoryNeighbors }, intIn(1, 1000)),
	"memory_min_similarity": field(func(s *search.Settings) *float64 { return &s.MemoryMinSimilarity }, floatIn(-1, 1)),
	"rerank_top_n":          field(func(s *search.Settings) *int { return &s.RerankTopN }, intIn(1, 1000)),
	"rerank_timeout":        field(func(s *search.Settings) *time.Duration { return &s.RerankTimeout }, positiveDuration),
}

// setter parses value into its field of s.
type setter func(s *search.Settings, value string) error

// field is the setter of the field ptr returns, with parse reading the value: a key of a
// string-typed setting (the fusion method) is field(ptr, oneOf(values...)).
func field[T any](ptr func(*search.Settings) *T, parse func(string) (T, error)) setter {
	return func(s *search.Settings, value string) error {
		v, err := parse(value)
		if err != nil {
			return err
		}
		*ptr(s) = v
		return nil
	}
}

func floatIn(lo, hi float64) func(string) (float64, error) {
	return func(s string) (float64, error) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		if f < lo || f > hi {
			return 0, fmt.Errorf("%s is out of range %g..%g", s, lo, hi)
		}
		return f, nil
	}
}

func intIn(lo, hi int) func(string) (int, error) {
	return func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not an integer", s)
		}
		if n < lo || n > hi {
			return 0, fmt.Errorf("%d is out of range %d..%d", n, lo, hi)
		}
		return n, nil
	}
}

func boolean(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", s)
	}
	return b, nil
}

func positiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 500ms or 2s", s)
	}
	return d, nil
}

// oneOf parses one of values, for settings of a string type.
func oneOf[T ~string](values ...T) func(string) (T, error) {
	return func(s string) (T, error) {
		if slices.Contains(values, T(s)) {
			return T(s), nil
		}
		names := make([]string, len(values))
		for i, v := range values {
			names[i] = string(v)
		}
		return "", fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
	}
}

// OptionError is an option of a run that cannot be used (an unknown setting or profile, a
// bad value): the caller's mistake, which a command reports as a usage error.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// SettingChange is one key=value of --set or --vary, already checked.
type SettingChange struct {
	key, value string
}

// ParseSettings reads the --set flags (applied to every configuration) and the --vary
// flags (the cartesian product of their values: one extra configuration each) into the
// base changes and the list of variations, in the order given (the first --vary varies
// slowest). Unknown keys, bad values, a key given twice and a key both set and varied fail
// here, before the dataset is read.
func ParseSettings(sets, varies []string) (base []SettingChange, variations [][]SettingChange, err error) {
	seen := map[string]string{}
	use := func(flag, key string) error {
		if _, ok := evalSettingKeys[key]; !ok {
			return &OptionError{Msg: fmt.Sprintf("%s: unknown search setting %q (have %s)", flag, key, strings.Join(SettingNames(), ", "))}
		}
		if prev, dup := seen[key]; dup {
			return &OptionError{Msg: fmt.Sprintf("%s: %s is already given by %s", flag, key, prev)}
		}
		seen[key] = flag
		return nil
	}
	check := func(flag, key, value string) error {
		scratch := search.DefaultSettings()
		if err := evalSettingKeys[key](&scratch, value); err != nil {
			return &OptionError{Msg: fmt.Sprintf("%s %s: %v", flag, key, err)}
		}
		return nil
	}
	for _, s := range sets {
		key, value, ok := strings.Cut(s, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return nil, nil, &OptionError{Msg: fmt.Sprintf("--set: want key=value, got %q", s)}
		}
		if err := use("--set", key); err != nil {
			return nil, nil, err
		}
		if err := check("--set", key, value); err != nil {
			return nil, nil, err
		}
		base = append(base, SettingChange{key, value})
	}
	variations = [][]SettingChange{nil}
	for _, v := range varies {
		key, list, ok := strings.Cut(v, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.TrimSpace(list) == "" {
			return nil, nil, &OptionError{Msg: fmt.Sprintf("--vary: want key=v1,v2,..., got %q", v)}
		}
		if err := use("--vary", key); err != nil {
			return nil, nil, err
		}
		var values []string
		for value := range strings.SplitSeq(list, ",") {
			value = strings.TrimSpace(value)
			if err := check("--vary", key, value); err != nil {
				return nil, nil, err
			}
			if slices.Contains(values, value) {
				return nil, nil, &OptionError{Msg: fmt.Sprintf("--vary %s: %s is given twice", key, value)}
			}
			values = append(values, value)
		}
		next := make([][]SettingChange, 0, len(variations)*len(values))
		for _, prefix := range variations {
			for _, value := range values {
				next = append(next, append(slices.Clip(prefix), SettingChange{key, value}))
			}
		}
		variations = next
	}
	return base, variations, nil
}

// SettingNames lists the keys of evalSettingKeys, sorted.
func SettingNames() []string {
	names := make([]string, 0, len(evalSettingKeys))
	for k := range evalSettingKeys {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// applySettings returns st with the changes applied (they were checked when parsed).
func applySettings(st search.Settings, changes ...[]SettingChange) search.Settings {
	for _, list := range changes {
		for _, c := range list {
			if err := evalSettingKeys[c.key](&st, c.value); err != nil {
				panic("eval: a checked setting failed: " + err.Error())
			}
		}
	}
	return st
}

// changesLabel is how a variation names its configuration: "k_rrf=30 postings=10".
func changesLabel(changes []SettingChange) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.key + "=" + c.value
	}
	return strings.Join(parts, " ")
}

// unreported marks a search setting the report cannot show: a field holding a component
// (an interface, a function) that has no description. TestEvalSettingsRecord fails on it.
const unreported = "unreported: "

// SettingsRecord is every field of st (a search.Settings) for the report's config.search,
// under its settingName: values as they are (durations as text, "2s"), and components (the
// planner, the reranker: interfaces) by their entry in described. It reads the fields by
// reflection, so a field added to search.Settings is reported without a change here.
func SettingsRecord[S any](st S, described map[string]any) map[string]any {
	v := reflect.ValueOf(st)
	t := v.Type()
	out := make(map[string]any, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := settingName(f.Name)
		switch f.Type.Kind() {
		case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
			if d, ok := described[name]; ok {
				out[name] = d
			} else {
				out[name] = unreported + f.Type.String()
			}
		default:
			if d, ok := v.Field(i).Interface().(time.Duration); ok {
				out[name] = d.String()
			} else {
				out[name] = v.Field(i).Interface()
			}
		}
	}
	return out
}

// settingNames are the names of fields settingName would spell badly.
var settingNames = map[string]string{"KRRF": "k_rrf"}

// settingName is the snake_case name of a search.Settings field: EfSearch → ef_search,
// RerankTopN → rerank_top_n, K1 → k1.
func settingName(f string) string {
	if n, ok := settingNames[f]; ok {
		return n
	}
	rs := []rune(f)
	var b strings.Builder
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			// a word starts at an upper-case letter after a lower-case one or a digit, or at
			// the last capital of an acronym followed by a lower-case letter (HTTPServer)
			if unicode.IsLower(prev) || unicode.IsDigit(prev) ||
				(unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// evalComponents describes the components of search.Settings that eval builds from the
// configuration, for SettingsRecord: the planner (which one, its vocabulary file and size,
// its model) and the reranker. vocabulary is the number of entries of the planner's
// vocabulary (0 without one).
func evalComponents(c config.Config, vocabulary int) map[string]any {
	planner := map[string]any{"name": c.Planner, "vocabulary": nil, "vocabulary_entries": vocabulary}
	if c.PlanVocabulary != "" {
		planner["vocabulary"] = c.PlanVocabulary
	}
	if c.Planner == plan.NameLLM {
		planner["model"] = c.LLMModel
		planner["timeout"] = c.PlanTimeout.String()
	}
	reranker := map[string]any{"kind": c.Reranker}
	switch c.Reranker {
	case "http":
		reranker["model"] = c.RerankModel
		reranker["style"] = c.RerankStyle
	case "llm":
		reranker["model"] = c.LLMModel
	}
	// the plan of requests that ask for none is made by the heuristic planner
	defaultPlanner := map[string]any{"name": plan.NameHeuristic, "vocabulary": planner["vocabulary"], "vocabulary_entries": vocabulary}
	return map[string]any{"planner": planner, "default_planner": defaultPlanner, "reranker": reranker}
}
