package enrich

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Descriptions from public MCP servers that use only full-width punctuation.
const (
	zhDescription = "通过车站的 station_telecode 查询车站的详细信息。支持按城市筛选，返回车站名称、拼音、电报码等信息，适用于查询火车票前获取车站代码。"
	jaDescription = "駅の電報コードから駅の詳細情報を取得します。都市で絞り込み、駅名・読み仮名・電報コードなどを返します。乗車券を検索する前に駅コードを調べるときに使います。"
)

// longDoc repeats description until it is well over the question limit in characters.
func longDoc(name, description string) Document {
	d := strings.Repeat(description, 1+2*maxQuestionLen/utf8.RuneCountInString(description))
	return NewDocument(name, "", d, []byte(`{"properties": {"city": {"type": "string", "description": "城市"}}}`))
}

// TestHeuristicCJK: a description with only CJK clause marks, or with none at all, gets
// questions, topics and a profile within their limits, in valid UTF-8.
func TestHeuristicCJK(t *testing.T) {
	ctx := context.Background()
	docs := map[string]Document{
		"zh":          longDoc("get_station_by_telecode", zhDescription),
		"ja":          longDoc("get_station_by_telecode", jaDescription),
		"no marks":    longDoc("get_station_by_telecode", strings.NewReplacer("。", "", "，", "", "、", "").Replace(zhDescription)),
		"no mark, ja": longDoc("get_station", strings.NewReplacer("。", "", "、", "", "・", "").Replace(jaDescription)),
	}
	for name, d := range docs {
		if utf8.RuneCountInString(d.Description) <= maxQuestionLen {
			t.Fatalf("%s: description of %d characters is not over the limit", name, utf8.RuneCountInString(d.Description))
		}
		qs, _, err := Heuristic{}.Questions(ctx, d, 10)
		if err != nil || len(qs) == 0 {
			t.Fatalf("%s: questions %v, %v", name, qs, err)
		}
		for _, q := range qs {
			if !utf8.ValidString(q) || utf8.RuneCountInString(q) > maxQuestionLen {
				t.Fatalf("%s: question of %d characters (valid UTF-8 %v): %q", name, utf8.RuneCountInString(q), utf8.ValidString(q), q)
			}
		}
		if _, _, err := (Heuristic{}).Topics(ctx, d); err != nil {
			t.Fatalf("%s: topics: %v", name, err)
		}
		p, _, err := Heuristic{}.Profile(ctx, d)
		if err != nil {
			t.Fatalf("%s: profile: %v", name, err)
		}
		for _, tag := range p.Tags {
			if !utf8.ValidString(tag) || utf8.RuneCountInString(tag) > maxTagLen {
				t.Fatalf("%s: tag %q", name, tag)
			}
		}
	}
	// the clause is cut at the ideographic full stop: the first question asks about the
	// first sentence only
	qs, _, _ := Heuristic{}.Questions(ctx, docs["zh"], 1)
	if want := "What is 通过车站的 station_telecode 查询车站的详细信息?"; qs[0] != want {
		t.Fatalf("first question %q, want %q", qs[0], want)
	}
}

func TestCutRunes(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"支持按城市筛选，返回车站名称", 10, "支持按城市筛选，"}, // at the clause mark
		{"一二三四五六七八九十十一", 5, "一二三四五"},       // no mark: at the character limit
		{"alpha beta gamma", 12, "alpha beta"},
	} {
		got := CutRunes(c.in, c.max)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("CutRunes(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// TestRepairQuestions: an over-long question is cut, a repeated or empty one dropped,
// invalid UTF-8 removed, each repair noted; the good questions are kept as they were.
func TestRepairQuestions(t *testing.T) {
	long := strings.Repeat("车站", maxQuestionLen)
	qs, notes, err := RepairQuestions([]string{"Which station?", long, "which station?", " ", "bad \xe8\xbd byte"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 3 || qs[0] != "Which station?" || qs[2] != "bad byte" {
		t.Fatalf("questions %q", qs)
	}
	if n := utf8.RuneCountInString(qs[1]); n != maxQuestionLen || !utf8.ValidString(qs[1]) {
		t.Fatalf("cut question has %d characters", n)
	}
	if len(notes) != 2 {
		t.Fatalf("notes %q", notes)
	}
	// a tag is counted in characters: 20 CJK characters are 60 bytes, within 48 characters;
	// a CJK sentence is one "word" however long: its characters are bounded too
	p := &Profile{Function: strings.Repeat("查询车站的详细信息", 60), Tags: []string{strings.Repeat("站", 20), "车站", "电报码"}}
	notes, err = p.Repair()
	if err != nil || len(p.Tags) != 3 || p.Tags[0] != strings.Repeat("站", 20) {
		t.Fatalf("%v %+v", err, p)
	}
	if n := utf8.RuneCountInString(p.Function); n != maxSentenceChars || !slices.Equal(notes, []string{"function cut to 400 characters"}) {
		t.Fatalf("function of %d characters, notes %q", n, notes)
	}
	// a CJK topic is cut to maxTopicChars at a clause mark
	ts, notes, err := RepairTopics([]string{strings.Repeat("车站查询，", 30)})
	if err != nil || utf8.RuneCountInString(ts[0]) > maxTopicChars || !strings.HasSuffix(ts[0], "，") || len(notes) != 1 {
		t.Fatalf("topics %q notes %q %v", ts, notes, err)
	}
}
