package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eval"
)

// taskCases are requests in several domains: multi-task ones with the pieces they split
// into, and single-task ones (want nil) that must come back whole.
var taskCases = []struct {
	domain, query string
	want          []string
}{
	// Multi-task: sentences, cue words, enumerations, "and"/"," before a task verb.
	{"benchmark", "Retrieve the profile of patient John Doe. After that, get the health statistics of China for 2020. Lastly, check the status of connection d97fg1saS9.",
		[]string{"Retrieve the profile of patient John Doe.", "get the health statistics of China for 2020.", "check the status of connection d97fg1saS9."}},
	{"messaging", "send an email to Bob and book a flight to Paris", []string{"send an email to Bob", "book a flight to Paris"}},
	// a request pasted in quotes; a list written out with literal "\n" (from JSON or a log)
	{"messaging", `"Get the weather in Paris and then send an email to Bob with the forecast."`,
		[]string{"Get the weather in Paris", "send an email to Bob with the forecast."}},
	{"general", `I need help with these:\n1. Get the current price of Bitcoin\n2. Convert 100 USD to EUR\n3. Find news about Tesla`,
		[]string{`I need help with these:\n1. Get the current price of Bitcoin`, "Convert 100 USD to EUR", "Find news about Tesla"}},
	{"files", `Copy C:\new_folder\notes.txt to the backup drive and email it to Ann.`,
		[]string{`Copy C:\new_folder\notes.txt to the backup drive`, "email it to Ann."}},
	{"charity", "I want to donate $50 to the Red Cross and also book a table for two at an Italian restaurant.",
		[]string{"I want to donate $50 to the Red Cross", "book a table for two at an Italian restaurant."}},
	{"social", "Donate 20 dollars to UNICEF, then tweet about it.", []string{"Donate 20 dollars to UNICEF", "tweet about it."}},
	{"finance", "Once I have the stock price of Apple, please convert it to euros.",
		[]string{"Once I have the stock price of Apple", "please convert it to euros."}},
	{"dev", "Create a branch named fix/login-timeout and open a draft pull request against main.",
		[]string{"Create a branch named fix/login-timeout", "open a draft pull request against main."}},
	{"dev", "Run the linter on pkg/api. After that, run the unit tests and post the results to #ci.",
		[]string{"Run the linter on pkg/api.", "run the unit tests", "post the results to #ci."}},
	{"dev", "Deploy v2.3.1 to staging; then notify @oncall in Slack.", []string{"Deploy v2.3.1 to staging", "notify @oncall in Slack."}},
	{"dev", "Run the test suite, fix the failing tests, and push the changes to GitHub.",
		[]string{"Run the test suite", "fix the failing tests", "push the changes to GitHub."}},
	{"dev", "List the open pull requests in toolgate/toolgate, then post a summary to the #dev channel on Slack.",
		[]string{"List the open pull requests in toolgate/toolgate", "post a summary to the #dev channel on Slack."}},
	{"dev", "Search Jira for open bugs assigned to me, then email a summary to my manager.",
		[]string{"Search Jira for open bugs assigned to me", "email a summary to my manager."}},
	{"dev", "- translate the README into German\n- summarize CHANGELOG.md", []string{"translate the README into German", "summarize CHANGELOG.md"}},
	{"files", "Move report.pdf to the Archive folder and share it with anna@example.org.",
		[]string{"Move report.pdf to the Archive folder", "share it with anna@example.org."}},
	{"files", "Download the invoice from https://billing.example.com/inv/42 and rename it to invoice-42.pdf.",
		[]string{"Download the invoice from https://billing.example.com/inv/42", "rename it to invoice-42.pdf."}},
	{"files", "Compress the logs folder into logs.zip and upload it to S3.", []string{"Compress the logs folder into logs.zip", "upload it to S3."}},
	{"files", "Show me all files larger than 1GB in /var/log and delete the ones older than 30 days.",
		[]string{"Show me all files larger than 1GB in /var/log", "delete the ones older than 30 days."}},
	{"files", "Convert the file data.json to YAML and validate it against schema.yaml.",
		[]string{"Convert the file data.json to YAML", "validate it against schema.yaml."}},
	{"messaging", "1. Email the Q3 deck to Priya\n2. Book the large meeting room for Thursday\n3. Order lunch for 12 people",
		[]string{"Email the Q3 deck to Priya", "Book the large meeting room for Thursday", "Order lunch for 12 people"}},
	{"messaging", "Send a WhatsApp message to Luis saying I'm running late, and call the restaurant to move our booking.",
		[]string{"Send a WhatsApp message to Luis saying I'm running late", "call the restaurant to move our booking."}},
	{"messaging", "Post the release announcement on Twitter. Also, update the status page.",
		[]string{"Post the release announcement on Twitter.", "update the status page."}},
	{"messaging", "Please do the following:\n- email Bob the report\n- book a flight to Paris",
		[]string{"Please do the following:\n- email Bob the report", "book a flight to Paris"}},
	{"messaging", "Hi, I need help. My order #4521 hasn't arrived. Can you track it and issue a refund if it's lost?",
		[]string{"My order #4521 hasn't arrived. Can you track it", "issue a refund if it's lost?"}},
	{"travel", "Find me a flight from Madrid to Lisbon on May 4. Then reserve a hotel near Rossio for two nights.",
		[]string{"Find me a flight from Madrid to Lisbon on May 4.", "reserve a hotel near Rossio for two nights."}},
	{"travel", "Can you help me book a flight to Nice and rent a car at the airport?",
		[]string{"Can you help me book a flight to Nice", "rent a car at the airport?"}},
	{"travel", "Rent a car at Munich airport and get the weather forecast for Garmisch.",
		[]string{"Rent a car at Munich airport", "get the weather forecast for Garmisch."}},
	{"travel", "Get the weather in Oslo, and also find a vegan restaurant in Bergen.",
		[]string{"Get the weather in Oslo", "find a vegan restaurant in Bergen."}},
	{"travel", "I'm planning a trip to Rome next month. Find me a hotel near the Colosseum and book a table for two at 8pm.",
		[]string{"I'm planning a trip to Rome next month. Find me a hotel near the Colosseum", "book a table for two at 8pm."}},
	{"travel", "Find a bed and breakfast in York and rent a car", []string{"Find a bed and breakfast in York", "rent a car"}},
	{"travel", "What's the weather forecast for Tokyo this weekend? Also, convert 500 USD to JPY.",
		[]string{"What's the weather forecast for Tokyo this weekend?", "convert 500 USD to JPY."}},
	{"travel", "1) get the weather in Paris 2) book a flight to London 3) convert 100 USD to EUR",
		[]string{"get the weather in Paris", "book a flight to London", "convert 100 USD to EUR"}},
	{"health", "Book an appointment with a dermatologist next week, and remind me the day before.",
		[]string{"Book an appointment with a dermatologist next week", "remind me the day before."}},
	{"health", "Check my heart rate data from Fitbit for yesterday. Next, log 30 minutes of cycling.",
		[]string{"Check my heart rate data from Fitbit for yesterday.", "log 30 minutes of cycling."}},
	{"health", "Schedule an appointment with Dr. Smith for next Tuesday and refill my prescription for metformin.",
		[]string{"Schedule an appointment with Dr. Smith for next Tuesday", "refill my prescription for metformin."}},
	{"health", "Transcribe the voicemail from Dr. Lee and add the follow-up to my calendar.",
		[]string{"Transcribe the voicemail from Dr. Lee", "add the follow-up to my calendar."}},
	{"finance", "Pay the Comcast bill, then transfer 500 to the joint account.", []string{"Pay the Comcast bill", "transfer 500 to the joint account."}},
	{"finance", "Get the latest exchange rate for EUR/USD and calculate the interest on a 10,000 loan at 5%.",
		[]string{"Get the latest exchange rate for EUR/USD", "calculate the interest on a 10,000 loan at 5%."}},
	{"databases", "Create a table named events in the analytics database, and insert the rows from events.csv.",
		[]string{"Create a table named events in the analytics database", "insert the rows from events.csv."}},
	{"databases", "Restore the orders database from last night's backup. Finally, verify the row count of the customers table.",
		[]string{"Restore the orders database from last night's backup.", "verify the row count of the customers table."}},
	{"databases", "Run this query: SELECT name, email FROM users WHERE active = true; then export the result to CSV.",
		[]string{"Run this query: SELECT name, email FROM users WHERE active = true", "export the result to CSV."}},
	{"databases", "List all S3 buckets in us-east-1 and delete the bucket tmp-uploads.",
		[]string{"List all S3 buckets in us-east-1", "delete the bucket tmp-uploads."}},
	{"general", "What's the population of Canada? And what's the capital of Australia?",
		[]string{"What's the population of Canada?", "what's the capital of Australia?"}},
	{"general", "Translate this text to French. Then summarize it.", []string{"Translate this text to French.", "summarize it."}},
	{"databases", "Get the user with id 42 and list their recent orders.", []string{"Get the user with id 42", "list their recent orders."}},
	{"home", "Turn on the lights, set the temperature to 22, and lock the doors.",
		[]string{"Turn on the lights", "set the temperature to 22", "lock the doors."}},
	{"dev", "Fix the bug in auth.go and write a test for it.", []string{"Fix the bug in auth.go", "write a test for it."}},
	{"finance", "Could you fetch the latest news about Tesla and tell me the current stock price?",
		[]string{"Could you fetch the latest news about Tesla", "tell me the current stock price?"}},
	{"dev", "Check if example.com is available and register it if so.", []string{"Check if example.com is available", "register it if so."}},

	// Single tasks: noun coordination, names and titles, abbreviations, file names, versions,
	// quoted strings, code, context sentences, follow-ups, fillers.
	{"files", "Show me read and write permissions for /etc/hosts", nil},
	{"files", "search and replace text in main.go", nil},
	{"files", "Rename report_final.docx to report_v2.docx.", nil},
	{"files", "Export the sales report as PDF and CSV.", nil},
	{"finance", "Get the profit and loss statement for Q3 2023.", nil},
	{"finance", "Get the bank statement and transfer history for March.", nil},
	{"finance", "Calculate 3.5% of 1,200.50 and round it to two decimals.", nil},
	{"finance", "Is Pentair stock up or down today? Show me the current price.", nil},
	{"finance", "Was MGM Resorts profitable in 2021? Give me its net income.", nil},
	{"finance", "Is MSCI fairly valued? I need its current stock price plus its 2023 revenue and net income.", nil},
	{"finance", "Compare the 2024 revenue of Microchip, Cushman & Wakefield and Owens & Minor, and determine which company achieved the highest revenue.", nil},
	{"finance", "How did $GBCI and Parker-Hannifin perform over the past year? Compare their weekly closing prices.", nil},
	{"finance", "Net profit of Warner Bros. Discovery in 2022, please.", nil},
	{"finance", "What's Wall Street's mean price forecast for T. Rowe Price?", nil},
	{"media", "Find the episode of Tom and Jerry where Tom plays the piano.", nil},
	{"media", "Play Simon and Garfunkel on Spotify.", nil},
	{"media", "Search for the book Pride and Prejudice and Zombies.", nil},
	{"travel", "Get the weather and the news for Paris.", nil},
	{"travel", "Find a bed and breakfast in York with free parking.", nil},
	{"travel", "Book a table for two at an Italian restaurant near Times Square at 7pm.", nil},
	{"travel", "I'm planning a trip to Rome next month. Find me a hotel near the Colosseum.", nil},
	{"travel", "Find flights from Paris to London and show the cheapest.", nil},
	{"travel", "Book a flight to Paris. Thanks!", nil},
	{"travel", "What's the weather like in Seattle? Should I bring an umbrella?", nil},
	{"shopping", "Add eggs, milk and bread to my shopping list.", nil},
	{"shopping", "Look up and compare the prices of the iPhone 15 and the Pixel 8.", nil},
	{"shopping", "Show me the terms and conditions of my Chase credit card.", nil},
	{"dev", "Download and install the latest version of Node.js.", nil},
	{"dev", "Fetch the commit history of toolgate/toolgate (e.g. the last 10 commits on main).", nil},
	{"dev", "Set the log level to debug in config.yaml, i.e. change \"level: info\" to \"level: debug\".", nil},
	{"dev", "Create a Jira ticket titled \"Export and import fail on large files\".", nil},
	{"dev", "Run `make test && make lint` in the repo root.", nil},
	{"dev", "Use version 1.2. It fixes the login bug.", nil},
	{"messaging", "Send Bob the file budget_v1.2.xlsx and the U.S. tax form.", nil},
	{"messaging", "Hi there! Can you tell me the exchange rate between USD and JPY?", nil},
	{"messaging", "Schedule a meeting with Ana and Joe on Friday at 10am about the launch plan.", nil},
	{"messaging", "Track my package and let me know when it arrives.", nil},
	{"general", "Translate \"search and rescue\" into French.", nil},
	{"general", "My laptop won't connect to Wi-Fi. How do I reset the network settings?", nil},
	{"databases", "Select name and email from the customers table.", nil},
	{"databases", "Query the users table and count the rows where status is active.", nil},
	{"media", "Look up the definition of serendipity and use it in a sentence.", nil},
	{"media", "I love this song. Play it again.", nil},
	{"shopping", "I need to buy a gift for my wife. Find some jewelry stores nearby.", nil},
	{"general", "Give me a random joke and a fun fact about cats.", nil},
	{"dev", "Show me how to install Docker and configure it.", nil},
	{"general", "Mr. Smith wants the Q3 report. Send it to him by Friday.", nil},
	{"travel", "Can you help me book a flight? I want to go to Paris next Monday.", nil},
	{"health", "I need the blood test results for patient 1234 from last week.", nil},
	{"health", "Check my blood pressure history and tell me which days were above 140.", nil},
	{"general", `Say "hello and send a message" to Bob.`, nil},
}

func TestSplitTasks(t *testing.T) {
	multi, single := 0, 0
	for _, c := range taskCases {
		got := SplitTasks(c.query)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: SplitTasks(%q)\n got %q\nwant %q", c.domain, c.query, got, c.want)
		}
		if c.want == nil {
			single++
		} else {
			multi++
		}
	}
	if multi < 30 || single < 30 {
		t.Errorf("%d multi-task and %d single-task cases, want at least 30 of each", multi, single)
	}
}

// TestDecomposeTasks: without a vocabulary a single task is one intent, the query as given,
// and a multi-task request one intent per task.
func TestDecomposeTasks(t *testing.T) {
	h := NewHeuristic(nil)
	for _, c := range taskCases {
		want := c.want
		if want == nil {
			want = []string{c.query}
		}
		if got := h.Decompose(c.query); !slices.Equal(got, want) {
			t.Errorf("Decompose(%q)\n got %q\nwant %q", c.query, got, want)
		}
		p, _ := h.Plan(t.Context(), c.query, ModeDecompose)
		if len(p.Intents) != len(want) || p.Intents[0].Query != want[0] {
			t.Errorf("Plan(%q, decompose) = %+v", c.query, p.Intents)
		}
	}
}

// TestDecomposeTasksAndEntities: a task holding an entity list still splits per entity.
func TestDecomposeTasksAndEntities(t *testing.T) {
	h := NewHeuristic(demoAliases())
	cases := []struct {
		query string
		want  []string
	}{
		{"Compare the revenue of Apple, Ford and Tesla, then email the table to Dana.",
			[]string{"Compare the revenue of Apple", "Compare the revenue of Ford", "Compare the revenue of Tesla", "email the table to Dana."}},
		{"Get Apple's stock price. After that, send the summary to #investing on Slack.",
			[]string{"Get Apple's stock price.", "send the summary to #investing on Slack."}},
		// One task: the entity rules alone, as before.
		{"Is Tesla stock up or down today? Show me the current price.", []string{"Is Tesla stock up or down today? Show me the current price."}},
	}
	for _, c := range cases {
		if got := h.Decompose(c.query); !slices.Equal(got, c.want) {
			t.Errorf("Decompose(%q)\n got %q\nwant %q", c.query, got, c.want)
		}
	}
}

// TestSplitTasksBound: more than MaxIntents tasks make MaxIntents pieces, the last holding
// the rest.
func TestSplitTasksBound(t *testing.T) {
	var b strings.Builder
	for i := range 13 {
		b.WriteString("Send the report to user")
		b.WriteString(string(rune('A' + i)))
		b.WriteString(". Then ")
	}
	b.WriteString("delete the draft.")
	got := SplitTasks(b.String())
	if len(got) != MaxIntents || !strings.HasSuffix(got[MaxIntents-1], "delete the draft.") {
		t.Errorf("%d pieces: %q", len(got), got)
	}
}

// TestDatasetTaskSplits: the queries of the shipped ScaleMCP-style dataset each ask one
// thing (of one or several companies: the entity rules split those), in one or two
// sentences ("Is Pentair stock up or down today? Show me the current price."): the task
// splitter must leave them whole.
func TestDatasetTaskSplits(t *testing.T) {
	ds, err := eval.Load("../../testdata/scalemcp-1000")
	if err != nil {
		t.Fatal(err)
	}
	split := 0
	for _, q := range ds.Queries {
		if got := SplitTasks(q.Query); got != nil {
			split++
			t.Logf("%s: %q → %q", q.Kind, q.Query, got)
		}
	}
	t.Logf("%d of %d queries split into tasks", split, len(ds.Queries))
	if split*200 > len(ds.Queries) {
		t.Errorf("%d of %d single-request queries split, want at most 0.5%%", split, len(ds.Queries))
	}
}
