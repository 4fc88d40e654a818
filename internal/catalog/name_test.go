package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// Names real servers serve that are not catalog names map to one that is, the same every
// time, keeping names that differ only in replaced characters apart; catalog names stay.
func TestCatalogName(t *testing.T) {
	long := strings.Repeat("a", 130)
	for original, want := range map[string]string{
		"get_weather":                 "get_weather",
		"v1.search-docs":              "v1.search-docs",
		strings.Repeat("b", 128):      strings.Repeat("b", 128),
		"PDF&URLTool":                 "PDF_URLTool-" + hash8("PDF&URLTool"),
		"requestFirst Aid Assistance": "requestFirst_Aid_Assistance-" + hash8("requestFirst Aid Assistance"),
		"météo du jour":               "m_t_o_du_jour-" + hash8("météo du jour"),
		"a  & b":                      "a_b-" + hash8("a  & b"),
		"天气":                          "_-" + hash8("天气"),
		long:                          long[:119] + "-" + hash8(long),
	} {
		got := CatalogName(original)
		if got != want {
			t.Errorf("CatalogName(%q) = %q, want %q", original, got, want)
		}
		if !toolNameRE.MatchString(got) || CatalogName(got) != got {
			t.Errorf("CatalogName(%q) = %q is not a catalog name", original, got)
		}
	}
	if a, b := CatalogName("a b"), CatalogName("a&b"); a == b {
		t.Errorf("two originals normalized alike share %q", a)
	}
	if got := ToolName("docs", "PDF&URLTool"); got != "docs__PDF_URLTool-"+hash8("PDF&URLTool") {
		t.Errorf("ToolName = %q", got)
	}
}

// A catalog may hold names that are not catalog names; two tools whose catalog names
// clash reject it, naming both.
func TestParseAcceptsServerNamesAndRefusesClashes(t *testing.T) {
	tools, err := Parse(strings.NewReader(`{"name":"PDF&URLTool"}` + "\n" + `{"name":"requestFirst Aid Assistance"}` + "\n"))
	if err != nil || len(tools) != 2 || tools[0].Name != "PDF&URLTool" {
		t.Fatalf("got %+v, %v; want both tools under their own names", tools, err)
	}
	clash := "x_y-" + hash8("x y")
	_, err = Parse(strings.NewReader(`{"name":"x y"}` + "\n" + `{"name":"` + clash + `"}` + "\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || len(pe.Problems) != 1 || pe.Problems[0].Line != 2 ||
		pe.Problems[0].Reason != `its catalog name "`+clash+`" is also that of "x y", line 1; rename one` {
		t.Fatalf("clash: got %v", err)
	}
}

// A name is reported as it is when it can be stored and read on one line, else escaped:
// a stored report must never fail on the name it reports.
func TestReportName(t *testing.T) {
	long := strings.Repeat("x", MaxOriginalNameLen+10)
	for name, want := range map[string]string{
		"search":        "search",
		"météo du jour": "météo du jour",
		"nul\x00name":   `"nul\x00name"`,
		"bad\xff":       `"bad\xff"`,
		"tab\there":     `"tab\there"`,
		long:            `"` + long[:MaxOriginalNameLen] + `"…`,
	} {
		if got := ReportName(name); got != want {
			t.Errorf("ReportName(%q) = %q, want %q", name, got, want)
		}
	}
}
