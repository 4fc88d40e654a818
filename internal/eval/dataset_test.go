package eval

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
)

const testTools = `{"name":"get_a","description":"Get A.","input_schema":{"type":"object","properties":{}}}
{"name":"get_b","description":"Get B.","input_schema":{"type":"object","properties":{}}}
`

func writeDir(t *testing.T, tools, queries string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ToolsFile), []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, QueriesFile), []byte(queries), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoad(t *testing.T) {
	dir := writeDir(t, testTools, `{"id":"1","query":"a?","gold":["get_a"],"kind":"single"}

{"id":"2","query":"a and b?","gold":["get_a","get_b"]}
`)
	ds, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Tools) != 2 || len(ds.Queries) != 2 || ds.Queries[1].Kind != "" || ds.Queries[0].Kind != "single" {
		t.Fatalf("got %+v", ds)
	}

	// Write then Load gives back the same dataset.
	out := t.TempDir()
	if err := Write(out, ds); err != nil {
		t.Fatal(err)
	}
	again, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Queries, ds.Queries) || len(again.Tools) != 2 || again.Tools[1].Hash() != ds.Tools[1].Hash() {
		t.Fatalf("round trip changed the dataset: %+v", again)
	}
}

func TestLoadReportsEveryBadLine(t *testing.T) {
	dir := writeDir(t, testTools, strings.Join([]string{
		`{"id":"1","query":"a?","gold":["get_a"]}`,
		`{"id":"1","query":"again","gold":["get_a"]}`,
		`{"id":"3","query":"","gold":["get_a"]}`,
		`{"id":"4","query":"none","gold":[]}`,
		`{"id":"5","query":"c?","gold":["get_a","get_c"]}`,
		`{"query":"no id","gold":["get_a"]}`,
		`not json`,
		`{"id":"8","query":"x","gold":["get_a"],"golds":[]}`,
	}, "\n"))
	_, err := Load(dir)
	var de *DatasetError
	if !errors.As(err, &de) {
		t.Fatalf("want *DatasetError, got %v", err)
	}
	var lines []int
	for _, p := range de.Problems {
		lines = append(lines, p.Line)
	}
	if !reflect.DeepEqual(lines, []int{2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("problem lines %v: %v", lines, err)
	}
	if !strings.Contains(de.Problems[3].Reason, "get_c") || strings.Contains(de.Problems[3].Reason, "get_a") {
		t.Fatalf("missing gold not named: %q", de.Problems[3].Reason)
	}
	if de.File != filepath.Join(dir, QueriesFile) {
		t.Fatalf("file %q", de.File)
	}
}

func TestLoadBadTools(t *testing.T) {
	dir := writeDir(t, testTools+`{"name":"bad","description":"x","input_schema":[1]}`+"\n", `{"id":"1","query":"a?","gold":["get_a"]}`)
	var pe *catalog.ParseError
	if _, err := Load(dir); !errors.As(err, &pe) || pe.Problems[0].Line != 3 {
		t.Fatalf("want catalog.ParseError on line 3, got %v", err)
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("want ErrNotExist for an empty directory, got %v", err)
	}
}

// Info identifies the files: the same bytes anywhere give the same hash, a change to
// either file gives another one.
func TestLoadInfo(t *testing.T) {
	queries := `{"id":"1","query":"a?","gold":["get_a"]}` + "\n"
	dir := writeDir(t, testTools, queries)
	ds, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := DatasetInfo{Path: dir, Tools: 2, Queries: 1, SHA256: Hash([]byte(testTools), []byte(queries))}
	if ds.Info.Path != want.Path || ds.Info.Tools != 2 || ds.Info.Queries != 1 || ds.Info.SHA256 != want.SHA256 ||
		len(ds.Info.ToolsSHA256) != 64 || len(ds.Info.QueriesSHA256) != 64 || ds.Info.ToolsSHA256 == ds.Info.QueriesSHA256 {
		t.Fatalf("info %+v", ds.Info)
	}
	same, err := Load(writeDir(t, testTools, queries))
	if err != nil {
		t.Fatal(err)
	}
	if same.Info.SHA256 != ds.Info.SHA256 || same.Info.ToolsSHA256 != ds.Info.ToolsSHA256 {
		t.Fatalf("same bytes, other hash: %+v vs %+v", same.Info, ds.Info)
	}
	other, err := Load(writeDir(t, testTools, queries+`{"id":"2","query":"b?","gold":["get_b"]}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if other.Info.SHA256 == ds.Info.SHA256 || other.Info.ToolsSHA256 != ds.Info.ToolsSHA256 || other.Info.QueriesSHA256 == ds.Info.QueriesSHA256 {
		t.Fatalf("changed queries: %+v vs %+v", other.Info, ds.Info)
	}
	// Bytes moved from one file to the other do not collide.
	if Hash([]byte("ab"), []byte("c")) == Hash([]byte("a"), []byte("bc")) {
		t.Fatal("framing: moved bytes give the same hash")
	}
}
