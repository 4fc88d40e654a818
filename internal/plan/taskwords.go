package plan

import (
	"slices"
	"strings"
)

// The word lists of the task splitter (tasks.go). They are generic English, not the vocabulary
// of any catalog: a word belongs here because it behaves this way in any request, and a
// domain noun never does. All are lower case; a form with "'" also matches with "’".

// verbs are imperative task verbs. true marks the verbs that are also common nouns or
// modifiers ("book", "list", "order", "read", "transfer"): after a plain "and" or ","
// they start a new task only when an object follows them (a determiner, a pronoun, a
// number, a name: see openers), so "transfer history" and "order details" stay nouns.
var verbs = wordSet(map[bool]string{
	false: `accept add analyse analyze approve ask assign buy calculate cancel compare compile compose
		compute configure convert create decline decrypt delete deploy describe detect determine donate
		diagnose disable enable encrypt estimate evaluate execute explain extract fetch find
		generate get give grant identify insert install invite launch locate lock make modify
		mute notify obtain
		predict prescribe provide purchase reboot rebook recommend register reject remind
		remove rename reopen reschedule reserve reset resize restart restore retrieve revoke send set shorten
		submit subscribe suggest summarise summarize tell transcribe translate truncate unlock
		unmute unsubscribe uninstall unzip validate verify visualize`,
	true: `alert archive attach back backup block book bump build call change charge check clean clone
		close comment commit compress copy count display download draft drop edit email export
		file fix flag forecast forward import issue join label list load log look map mark measure merge message monitor move note open order pay ping
		plan play post print pull push query rate read record refill refund reply report
		request review run save scan schedule search share show sign sort start stop store
		rent stream test text track transfer turn tweet update upgrade upload use watch write`,
})

// gotVerbs say, after "once I" or "when we", that an earlier task's result is at hand.
var gotVerbs = wordList(`have get got know find found receive received`)

// presentVerbs show or pick what an earlier task found when their object is a pronoun or a
// superlative ("show the cheapest", "use it in a sentence"); with an object of their own
// ("tell me the current stock price") they are tasks.
var presentVerbs = wordList(`choose determine display give highlight identify include list
	output pick present print return select show tell use`)

// resultVerbs work on what an earlier task found ("… and count the rows where …", "… and
// compare them"): without a name of their own they are its continuation.
var resultVerbs = wordList(`average compare count filter rank sort sum total`)

// superlatives after a presentVerb pick among earlier results.
var superlatives = wordList(`best worst cheapest fastest shortest longest highest lowest
	largest smallest biggest nearest closest earliest most least top first last greatest
	quickest strongest weakest richest one ones results result rest same difference`)

// particles complete a verb without being its object ("look up", "turn off").
var particles = wordList(`up down out in on off over back away around through`)

// openers begin the object of a verb: after an ambiguous verb one of them (or a number, a
// name, a quoted string) must follow for the verb to count as one.
var openers = wordList(`a an the my your our their his her its this that these those all
	every each some any no another me us him them it everyone everybody everything someone
	something anything one two three four five six seven eight nine ten`)

// verbParticles are the words besides openers that may follow an ambiguous verb: "search
// for", "look up", "check whether".
var verbParticles = map[string]map[string]bool{
	"search": wordList("for"), "look": wordList("up for into"), "check": wordList("on if whether in out"),
	"sign": wordList("up in out"), "log": wordList("in out into"), "turn": wordList("on off up down"),
	"clean": wordList("up"), "back": wordList("up"), "backup": wordList("up"), "call": wordList("back"), "reply": wordList("to with"),
	"write": wordList("to"), "switch": wordList("to on off"), "start": wordList("up"), "pull": wordList("up"),
}

// determiners before a word make it a noun: "my order", "the list".
var determiners = wordList(`a an the my your our their his her its this that these those each
	every any some no`)

// questionWords open a question, which is a task of its own.
var questionWords = wordList(`what what's whats what're how how's hows where where's when
	when's who who's whom whose why which is are was were am do does did can could will would
	should shall may might has have had isn't aren't don't doesn't didn't won't can't`)

// whClause are the question words that may open a second question after "and" ("… and
// what time is it in Tokyo?").
var whClause = wordList(`what what's how how's where where's when who who's`)

// fillers make up the pieces that are dropped ("Thanks!", "Please help.").
var fillers = wordList(`thanks thank you thx ty please help hi hello hey there in advance much
	so a lot cheers appreciated appreciate it any is great ok okay bye regards best that's
	all i we need can could me with this some`)

// politeWords are skipped before the verb of a task ("please", "now").
var politeWords = wordList(`please kindly pls plz just now so ok okay also then and hi hello
	hey there`)

// backrefs point back to what an earlier piece named: a piece holding one and no name of
// its own cannot be searched alone ("… and tell me which had the best margin", "Give me
// its net income").
var backrefs = wordList(`which whichever its their theirs respectively former latter`)

// backrefPairs are two-word back-references.
var backrefPairs = func() map[[2]string]bool {
	m := map[[2]string]bool{}
	for _, p := range strings.Fields(`each_of each_one for_each for_both both_of all_of of_them
		of_these of_those the_same the_results the_result the_output them_all`) {
		a, b, _ := strings.Cut(p, "_")
		m[[2]string{a, b}] = true
	}
	return m
}()

// abbreviations end with a '.' that does not end a sentence.
var abbreviations = wordList(`e.g i.e etc vs approx mr mrs ms dr prof st inc ltd co corp jr sr
	no nos vol ca cf al dept est fig bros ave mt`)

// requestVerbs follow "I" or "we" in a request: "I need the report", "we want to book".
var requestVerbs = wordList(`need want require wish`)

// cues introduce a new task explicitly: "then", "after that", "2)". bare cues may also
// stand alone between two tasks ("book a flight then rent a car"); the others need an
// "and", a comma or the start of a sentence.
type cue struct {
	words []string
	bare  bool
}

// cues maps the first word of each cue phrase to its phrases, longest first ("first of all"
// before "first").
var cues = func() map[string][]cue {
	out := map[string][]cue{}
	for _, s := range []string{
		"+then", "after that", "after this", "afterwards", "afterward", "next", "finally",
		"lastly", "last", "also", "additionally", "in addition", "plus", "+as well as",
		"once done", "once that's done", "once that is done", "when done", "when finished",
		"once finished", "when you're done", "first", "firstly", "first of all", "second",
		"secondly", "third", "thirdly", "fourth", "later", "subsequently", "besides",
		"moreover", "furthermore",
	} {
		bare := strings.HasPrefix(s, "+")
		ws := strings.Fields(strings.TrimPrefix(s, "+"))
		out[ws[0]] = append(out[ws[0]], cue{words: ws, bare: bare})
	}
	for _, list := range out {
		slices.SortStableFunc(list, func(a, b cue) int { return len(b.words) - len(a.words) })
	}
	return out
}()

// wordList makes a set of the space-separated words of s, with "’" variants of "'" forms.
func wordList(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
		if strings.Contains(w, "'") {
			m[strings.ReplaceAll(w, "'", "’")] = true
		}
	}
	return m
}

// wordSet maps each verb of the lists to whether it is ambiguous (the key of its list).
func wordSet(lists map[bool]string) map[string]bool {
	m := map[string]bool{}
	for ambiguous, s := range lists {
		for w := range wordList(s) {
			m[w] = ambiguous
		}
	}
	return m
}

// subjects open a statement rather than a command: "I need to …", "we want …".
var subjects = wordList(`i we you i'd we'd i'm im i've`)

// whTo open a clause of their own before "to": "how to install Docker and configure it".
var whTo = wordList(`how where what when which whether who`)

// askVerbs after "I want to" make a request ("I'd like to know the weather"); other words
// there tell the context ("I want to go to Paris next Monday").
var askVerbs = wordList(`know see learn understand hear`)
