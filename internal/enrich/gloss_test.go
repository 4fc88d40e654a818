package enrich

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/tdwa"
)

// The glosses of a Chinese description are the English senses of its words, found longest
// first, each word once, in order; text without Chinese has none, and a tool with Chinese
// text gets them as its gloss component (which the concat text includes).
func TestGloss(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"查询车站的详细信息", "check; inquire; rail station; bus stop; detailed; in detail; information; news"},
		{"数据库", "database"},                       // three characters before two (数据 is a word too)
		{"车站车站", "rail station; bus stop"},        // each word once
		{"Get the weather forecast.", ""},         // no Chinese
		{"的", ""},                                 // single characters are not in the glossary
		{"骑行 route 步行", "ride; go on foot; walk"}, // runs split by other text
	} {
		if got := Gloss(tc.text); got != tc.want {
			t.Errorf("Gloss(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	// at most maxGlosses words (of at most two senses each): the words past them are left out
	words := slices.Sorted(maps.Keys(glossary()))[:maxGlosses]
	long := Gloss(strings.Join(words, "，") + "，机场")
	if n := len(strings.Split(long, "; ")); n < maxGlosses || n > 2*maxGlosses || strings.Contains(long, "airport") {
		t.Errorf("%d words and 机场 (airport): %d senses, airport %v; want the first %d words' senses only",
			maxGlosses, n, strings.Contains(long, "airport"), maxGlosses)
	}

	find := func(cs []Component, kind string) string {
		for _, c := range cs {
			if c.Kind == kind {
				return c.Text
			}
		}
		return ""
	}
	zh := Components(NewDocument("maps_weather", "", "根据城市名称查询指定城市的天气", []byte(`{"properties": {"city": {"type": "string", "description": "城市名称"}}}`)), Outputs{})
	if g := find(zh, KindGloss); !strings.Contains(g, "weather") || !strings.Contains(g, "city") {
		t.Errorf("gloss component %q, want the senses of 天气 and 城市", g)
	}
	if c := find(zh, tdwa.KindConcat); !strings.Contains(c, find(zh, KindGloss)) {
		t.Errorf("concat %q lacks the gloss", c)
	}
	en := Components(NewDocument("get_weather", "", "Get the weather for a city", nil), Outputs{})
	if g := find(en, KindGloss); g != "" {
		t.Errorf("an English tool has a gloss %q", g)
	}
}
