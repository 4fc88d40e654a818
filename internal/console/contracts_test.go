package console_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/analytics"
	"github.com/toolgate/toolgate/internal/search"
)

// TestContractsMatchTheAPI: the answers the browser tests serve in place of the API
// (testdata/contracts) have exactly the fields of the Go types the API answers with, so a
// field the API gains or drops fails here before the console is drawn from a stale
// contract. A type with its own JSON encoding (a result's tool, a time) is not looked into.
func TestContractsMatchTheAPI(t *testing.T) {
	for name, typ := range map[string]reflect.Type{
		"search-explain": reflect.TypeFor[search.Response](),
		"searches":       listAnswer("buckets", reflect.TypeFor[analytics.SearchBucket]()),
		"latency":        listAnswer("buckets", reflect.TypeFor[analytics.LatencyBucket]()),
		"zero-results":   listAnswer("queries", reflect.TypeFor[analytics.ZeroResultQuery]()),
		"low-score":      listAnswer("queries", reflect.TypeFor[analytics.LowScoreQuery]()),
		"profiles":       listAnswer("days", reflect.TypeFor[analytics.ProfileDay]()),
		"learning":       reflect.TypeFor[analytics.LearningAnswer](),
		"slowest":        listAnswer("searches", reflect.TypeFor[analytics.SlowSearch]()),
		"top-queries":    listAnswer("queries", reflect.TypeFor[analytics.TopQuery]()),
		"tools":          reflect.TypeFor[analytics.ToolLists](),
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "contracts", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, problem := range contractProblems(name, typ, v) {
			t.Error(problem)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "contracts", "*.json"))
	if len(files) != 10 {
		t.Errorf("%d contracts, 10 checked: check the new ones too", len(files))
	}
}

// listAnswer is the type of an analytics answer, {key: [rows]} (api/analytics.go).
func listAnswer(key string, row reflect.Type) reflect.Type {
	return reflect.StructOf([]reflect.StructField{{Name: "Rows", Type: reflect.SliceOf(row), Tag: reflect.StructTag(`json:"` + key + `"`)}})
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// contractProblems compares the JSON value v at path with what the type typ encodes to.
func contractProblems(path string, typ reflect.Type, v any) []string {
	if typ.Implements(jsonMarshaler) || reflect.PointerTo(typ).Implements(jsonMarshaler) {
		return nil // its own encoding
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if v == nil {
		return nil // null: a nil pointer, slice or map
	}
	switch typ.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{path + ": want an object"}
		}
		var problems []string
		seen := map[string]bool{}
		for f := range jsonFields(typ) {
			seen[f.name] = true
			fv, ok := obj[f.name]
			if !ok {
				if !f.omitempty {
					problems = append(problems, path+"."+f.name+": the API answers it, the contract lacks it")
				}
				continue
			}
			problems = append(problems, contractProblems(path+"."+f.name, f.typ, fv)...)
		}
		for k := range obj {
			if !seen[k] {
				problems = append(problems, path+"."+k+": in the contract, not in the API's answer")
			}
		}
		return problems
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return []string{path + ": want an array"}
		}
		var problems []string
		for _, e := range arr {
			problems = append(problems, contractProblems(path+"[]", typ.Elem(), e)...)
		}
		return problems
	case reflect.String:
		if _, ok := v.(string); !ok {
			return []string{path + ": want a string"}
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return []string{path + ": want a boolean"}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if _, ok := v.(float64); !ok {
			return []string{path + ": want a number"}
		}
	}
	return nil // maps and interfaces hold anything
}

type jsonField struct {
	name      string
	typ       reflect.Type
	omitempty bool
}

// jsonFields yields the fields encoding/json writes for the struct type typ, embedded
// structs' fields inlined.
func jsonFields(typ reflect.Type) func(func(jsonField) bool) {
	return func(yield func(jsonField) bool) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag, _ := f.Tag.Lookup("json")
			name, opts, _ := strings.Cut(tag, ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				for g := range jsonFields(f.Type) {
					if !yield(g) {
						return
					}
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			if !yield(jsonField{name: name, typ: f.Type, omitempty: strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")}) {
				return
			}
		}
	}
}
