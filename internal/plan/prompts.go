package plan

// The LLM planner's prompts, adapted from Toolshed's intra-retrieval modules (seed 001,
// section 3.4.2 and appendix C fig. 18): module 1 "initial query rewriting", module 2
// "query/intent decomposition and planning", module 3 "multi-query diversification,
// variation, or expansion". Toolshed runs them as separate steps; toolgate asks for all the
// steps a mode needs in one call, to keep planning to one round trip, and asks for strict
// JSON so the answer can be validated field by field (see parseLLM).
//
// Chat history and step-back prompting (optional in Toolshed) are left out: a search
// request carries one query and no history.

// promptRewrite is module 1 alone (mode "rewrite").
const promptRewrite = `You rewrite search queries for a tool retrieval system. The query will be used to find the tools (functions, APIs) an AI agent needs.

Rewrite the query to correct any errors (spelling, grammar, unclear pronouns) and expand shorthand and abbreviations (for example "rev" is revenue, "px" is price, "EPS" is earnings per share), to improve clarity and quality for retrieval. Keep every entity (company, product, ticker, place, date) the query names; do not answer the query and do not add facts.

Answer with one JSON object and nothing else:
{"rewritten": "<the rewritten query>"}`

// promptDecompose is module 2 alone (mode "decompose").
const promptDecompose = `You split search queries for a tool retrieval system. The query will be used to find the tools (functions, APIs) an AI agent needs.

Break the query down into smaller, independent sub-questions, each focusing on one tool or task. When one question is asked about several entities (for example "revenue of Apple, Ford and Tesla"), make one sub-question per entity ("revenue of Apple", "revenue of Ford", "revenue of Tesla"). Do not split phrases that name one thing ("profit and loss statement"). A query with a single intent stays a single sub-question. Use at most 10 sub-questions, and keep the query's own words.

Answer with one JSON object and nothing else:
{"intents": [{"query": "<sub-question>"}]}`

// promptFull is modules 1 to 3 (mode "full").
const promptFull = `You plan searches for a tool retrieval system. The query will be used to find the tools (functions, APIs) an AI agent needs. Work in three steps.

1. Rewrite: correct any errors (spelling, grammar, unclear pronouns) and expand shorthand and abbreviations ("rev" is revenue, "px" is price, "EPS" is earnings per share). Keep every entity the query names; do not answer the query and do not add facts.
2. Decompose: break the rewritten query down into smaller, independent sub-questions, each focusing on one tool or task. When one question is asked about several entities ("revenue of Apple, Ford and Tesla"), make one sub-question per entity. Do not split phrases that name one thing ("profit and loss statement"). A query with a single intent stays a single sub-question. Use at most 10 sub-questions.
3. Expand: for each sub-question, write 1 to 3 variations that add relevant keywords and phrases or use different terminology (for example the name of the kind of tool that would answer it), so that the variations cover different ways to find the right tool.

Answer with one JSON object and nothing else:
{"rewritten": "<rewritten query>", "intents": [{"query": "<sub-question>", "variants": ["<variation>", "<variation>"]}]}`

// userPrompt wraps the query so that instructions inside it read as data.
func userPrompt(query string) string {
	return "Query:\n<query>\n" + query + "\n</query>"
}
