-- The lexical index: how it is written (docs/search.md#the-lexical-index).
--
-- Applied after the migrations by internal/postgres.MigrateUp, whole, whenever its content
-- changed or a migration ran: every statement here must be re-runnable (CREATE OR REPLACE).
-- The tables are made by the migrations (0004, 0011, 0025, 0028).
--
-- The lexical document of a tool is one weighted tsvector, in the tool's language (the
-- configuration toolgate_detect_language chooses, english by default; identifiers always in
-- english; CJK text also as character pairs), stored as parallel arrays of its sorted
-- lexemes and their weighted term frequencies:
--   A (weight 3.0): the namespaced name and the title, as words (`acme__getStockPrice` ->
--                   "acme get stock price", a run of initials one word:
--                   toolgate_name_words);
--   B (weight 2.0): synthetic questions, observed queries (the words of the searches that
--                   led to the tool, internal/observed), key topics, Tool-DE profile tags
--                   and function;
--   C (weight 1.0): the description and the profile's when_to_use;
--   D (weight 0.5): parameter names and parameter descriptions of the input schema, and the
--                   English glosses of the tool's Chinese words (component gloss) and the
--                   knowledge expansion (related words of the key terms from the built-in
--                   lexicon, internal/enrich/expansion.go): below every word of the tool's own.
-- A lexeme's term frequency is the sum of the weights of its positions, the document length
-- the sum over all its lexemes. profile_limitation and example_usage are left out (Tool-DE
-- found example usage hurts retrieval), so is the `concat` component. Only searchable tools
-- (enabled and approved) are indexed, so N, the average length and the document frequencies
-- describe exactly the corpus a search may return.
--
-- How it is kept up to date:
--   1. Every statement writing tools or the lexical kinds of tool_components appends the ids
--      of the tools it changed to search_queue (statement-level triggers below). That is the
--      only index work inside a writer's transaction: an insert into an append-only table,
--      which waits for nobody.
--   2. One indexer at a time (transaction-level advisory lock 7250011, locks.LexicalIndexer
--      of internal/locks/locks.go; internal/lexical)
--      drains the queue: toolgate_search_index claims a batch of queued tools and recomputes
--      their documents, postings, document frequencies and the corpus totals, set-based.
--      Only the indexer writes search_docs, search_postings, search_lexemes, search_corpus
--      and the per-source statistics (search_source_lexemes, search_source_corpus, migration
--      0028), so it waits for no one but another indexer, and no writer waits for it.
--   3. Postings carry an impact (toolgate_bm25_impact, sql/functions/bm25.sql: the BM25 term
--      weight at the average document length at write time) that only chooses a term's candidates; scores are
--      computed exactly at search time. When the average length drifts, the indexer
--      recomputes every impact (toolgate_search_reimpact, in batches).

-- The name key: a tool name (or a query) as lower-case words separated by one space;
-- camelCase, snake_case, kebab-case and the `__` namespace separator all split. Its Go twin is
-- search.nameKey (internal/search/names.go; TestNameKeyMatchesSQL runs both on the same cases).
-- No index expression or generated column uses it, but the index stores its results
-- (search_docs.name_keys and the name words of every document): a change here must be
-- followed by a rebuild of the index (queue every tool into search_queue) in the same release.
-- Migration 0004 made the first copy, which its own triggers needed; this is the live one.
CREATE OR REPLACE FUNCTION toolgate_name_key(s text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT btrim(lower(regexp_replace(
        regexp_replace(s, '([a-z0-9])([A-Z])', '\1 \2', 'g'),
        '[^A-Za-z0-9]+', ' ', 'g')))
$$;

-- The field weights: the weight of a tsvector field label (A to D, above) in a lexeme's term
-- frequency. Like the name key, its results are stored (search_docs.tfs and doc_len, the
-- postings' impacts, search_corpus.total_len): a change needs the same rebuild. Migration
-- 0004 made the first copy; this is the live one.
CREATE OR REPLACE FUNCTION toolgate_field_weight(label text) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE label WHEN 'A' THEN 3.0 WHEN 'B' THEN 2.0 WHEN 'C' THEN 1.0 ELSE 0.5 END::real
$$;

-- The words of a name key (toolgate_name_key) as the lexical document reads them: a run of
-- two or more words of one or two letters, one of them a single letter other than the words
-- "a" and "i", is one word ("get at t revenue" -> "get att revenue", "s p global" -> "sp
-- global", "pg e" -> "pge"; "add to a list" stays as it is). A name written with an
-- ampersand or initials ("AT&T", "S&P", "PG&E") comes out of an identifier
-- (get_at_t_revenue) split into stop words and letters; joined, it is the word the text
-- analysis makes of "AT&T" (toolgate_text_vector). A single "s" ending such a run is a
-- possessive ("bj s" of "BJ's") and stays apart. The heuristic enricher joins the names it
-- writes into questions the same way (its Go twin enrich.joinInitialWords;
-- TestJoinInitialWordsMatchesSQL runs both on the same cases). Its results are stored, as
-- the name key's are: a change needs the same rebuild.
CREATE OR REPLACE FUNCTION toolgate_name_words(key text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
    words  text[] := string_to_array(key, ' ');
    result text[] := '{}';
    run    text[] := '{}';
    w      text;
BEGIN
    -- an empty word at the end closes the last run
    FOREACH w IN ARRAY words || ''::text LOOP
        IF w ~ '^[a-z]{1,2}$' THEN
            run := run || w;
            CONTINUE;
        END IF;
        IF cardinality(run) >= 2 AND run[cardinality(run)] = 's' THEN
            -- the possessive's "s" stays apart
            run := run[1:cardinality(run) - 1];
            w := 's ' || w;
        END IF;
        IF cardinality(run) >= 2 AND EXISTS (SELECT 1 FROM unnest(run) r WHERE length(r) = 1 AND r NOT IN ('a', 'i')) THEN
            result := result || array_to_string(run, '');
        ELSE
            result := result || run;
        END IF;
        run := '{}';
        result := result || w;
    END LOOP;
    RETURN btrim(array_to_string(result, ' '));
END $$;

-- The words of Chinese, Japanese and Korean text as overlapping pairs of characters
-- (character bigrams), space-separated: these scripts write no spaces between words, so the
-- english configuration makes each run of them one lexeme (a whole clause) and a query for
-- one word of it matched nothing. "查询车站的详细信息" gives "查询 询车 车站 站的 的详 详细 细信 信息".
-- A run of one or two characters gives nothing: the english configuration already makes it
-- a lexeme of its own, which is the bigram (counted once, not twice). Ideographs, kana and
-- hangul count (CJK punctuation ends a run). A query is split the same way
-- (toolgate_text_vector), so a word of two characters matches every document containing
-- it, and a longer one the documents containing its pairs.
-- PL/pgSQL, not SQL: a SQL function with a FROM clause is not inlined and its body was
-- planned again in every statement calling it (0.2-0.4 ms per search, most of the query's
-- lexical analysis); PL/pgSQL keeps its plan for the session, and text without any CJK
-- character (one regular expression test) skips the query altogether.
CREATE OR REPLACE FUNCTION toolgate_cjk_bigrams(txt text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    cjk constant text := '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+';
BEGIN
    IF txt IS NULL OR txt !~ cjk THEN
        RETURN '';
    END IF;
    RETURN (SELECT coalesce(string_agg(substr(m.run, i, 2), ' ' ORDER BY m.ord, i), '')
            FROM regexp_matches(txt, cjk, 'g') WITH ORDINALITY AS r (a, ord)
            CROSS JOIN LATERAL (SELECT r.a[1] AS run, r.ord) m
            CROSS JOIN LATERAL generate_series(1, length(m.run) - 1) AS i
            WHERE length(m.run) >= 3);
END $$;

-- The lexical vector of a text in a language (a text-search configuration): the
-- configuration's stemming and stop words, plus the CJK character bigrams
-- (toolgate_cjk_bigrams) with the simple configuration, with two rules for names the
-- configurations cannot see. Documents and queries are both analysed here, so both follow
-- them:
--   - A name of initials joined by an ampersand ("AT&T", "P&G", "S&P", "PG&E", "H&M", "Q&A":
--     one to three letters on each side, no space) is one word ("ATT", "PG"): the parser
--     splits at the "&", and "at", "t", "s" are stop words: without the rule AT&T's
--     documents hold no word for their company at all.
--   - Legal-form abbreviations ("Inc.", "Corp.", "Ltd", "LLC", "plc", "GmbH", "S.A.", "N.V.",
--     ...) are no words: they say nothing of what a tool does, and a company's "Inc." would
--     be a rare word of high idf shared with every request naming another "... Inc.". Only
--     abbreviations whose sole use is a legal form: not "AG", "SE" or "Co" (words of their own),
--     nor "Corporation" or "Limited", whose stems ("corpor", "limit") are also "corporate"
--     and "limited".
-- Text without CJK characters, ampersands or those abbreviations gets exactly
-- to_tsvector(cfg, txt).
CREATE OR REPLACE FUNCTION toolgate_text_vector(cfg regconfig, txt text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ts_delete(to_tsvector(cfg, regexp_replace(txt, '\m([[:alpha:]]{1,3})&([[:alpha:]]{1,3})\M', '\1\2', 'g')),
                     '{inc,corp,ltd,llc,llp,plc,gmbh,sarl,s.a,s.a.s,s.l,s.p.a,s.r.l,n.v,b.v,k.k}'::text[])
        || to_tsvector('simple', toolgate_cjk_bigrams(txt))
$$;

-- The same in English: the vector of every English document.
CREATE OR REPLACE FUNCTION toolgate_text_vector(txt text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT toolgate_text_vector('english', txt)
$$;

-- The language of a text: the snowball configuration whose stop words (search_stopwords,
-- migration 0025) the text uses most, counting distinct words, if it uses at least two of
-- them, else english. English wins a tie, so an English text stays English unless another
-- language's stop words outnumber its own ("a", "de", "die", "in" are stop words of several
-- languages). Text without such words (a list of names, Chinese) is english: its words are
-- kept as the english configuration keeps them, and CJK text gets its character pairs.
-- Only the first 2,000 characters are read.
CREATE OR REPLACE FUNCTION toolgate_detect_language(txt text) RETURNS regconfig
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce((
        SELECT s.language FROM search_stopwords s
        WHERE s.word = ANY (tsvector_to_array(to_tsvector('simple', left(txt, 2000))))
        GROUP BY s.language
        HAVING count(*) >= 2
        ORDER BY count(*) DESC, s.language <> 'english', s.language
        LIMIT 1), 'english')::regconfig
$$;

-- The vector of a document field in language cfg: its identifiers (tool and parameter names,
-- English words by convention: get_weather, city) with the english configuration, its prose
-- with cfg. An English field is the vector of the two joined by a space.
CREATE OR REPLACE FUNCTION toolgate_field_vector(cfg regconfig, idents text, prose text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN cfg = 'english'::regconfig THEN toolgate_text_vector('english', idents || ' ' || prose)
                ELSE toolgate_text_vector('english', idents) || toolgate_text_vector(cfg, prose) END
$$;

-- The lexemes of a query: its words analysed by english and by every other language the
-- sources seen hold (NULL: the whole index, search_languages; else the languages of those
-- sources' tools, search_source_languages), so "Wettervorhersage" finds the German
-- documents' 'wettervorhersag' whatever language the query is in (a query is too short to
-- detect its language reliably), and a caller restricted to some sources is analysed in
-- their languages alone: its terms do not tell that another source holds German tools. Another
-- language keeps the English stop words ("the", "is", "what"), which the documents of that
-- language hold when they quote English (the heuristic questions of a French tool are
-- English sentences with French words): those lexemes of the other languages are left out,
-- else an English query's "the" would find every such document as a rare word. With
-- English documents only, exactly the lexemes of toolgate_text_vector(txt). Distinct.
CREATE OR REPLACE FUNCTION toolgate_query_lexemes(txt text, seen bigint[]) RETURNS SETOF text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT DISTINCT u.lexeme
    FROM (SELECT 'english'::regconfig AS cfg
          UNION SELECT l.language::regconfig FROM search_languages l WHERE seen IS NULL
          UNION SELECT l.language::regconfig FROM search_source_languages l WHERE l.source_id = ANY (seen)) c
    CROSS JOIN LATERAL unnest(toolgate_text_vector(c.cfg, txt)) AS u (lexeme, positions, weights)
    WHERE c.cfg = 'english'::regconfig
       OR NOT EXISTS (SELECT 1 FROM search_stopwords s WHERE s.word = u.lexeme AND s.language = 'english')
$$;

-- The lexemes of a query in every language of the index (the tune's, which sees the whole
-- corpus).
CREATE OR REPLACE FUNCTION toolgate_query_lexemes(txt text) RETURNS SETOF text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT toolgate_query_lexemes(txt, NULL)
$$;

-- The documents of the searchable tools among ids, as they are now, with the language
-- each was analysed in (toolgate_detect_language of its title and description).
DROP FUNCTION IF EXISTS toolgate_search_document(bigint[]);
CREATE FUNCTION toolgate_search_document(ids bigint[])
RETURNS TABLE (tool_id bigint, source_id bigint, lexemes text[], tfs real[], doc_len real, tags text[], name_keys text[],
               language text)
LANGUAGE sql STABLE AS $$
    SELECT d.tool_id, d.source_id,
           coalesce(x.lexemes, '{}'), coalesce(x.tfs, '{}'), coalesce(x.len, 0),
           d.tags, d.name_keys, d.lang::text
    FROM (
        SELECT t.id AS tool_id, t.source_id, g.lang,
               setweight(toolgate_field_vector(g.lang, toolgate_name_words(toolgate_name_key(t.name)), coalesce(t.title, '')), 'A')
            || setweight(toolgate_text_vector(g.lang, coalesce(
                   (SELECT string_agg(c.text, ' ' ORDER BY c.kind, c.ordinal) FROM tool_components c
                    WHERE c.tool_id = t.id
                      AND c.kind IN ('question', 'observed', 'topics', 'profile_tags', 'profile_function')), '')), 'B')
            || setweight(toolgate_text_vector(g.lang, t.description || ' ' || coalesce(
                   (SELECT string_agg(c.text, ' ' ORDER BY c.ordinal) FROM tool_components c
                    WHERE c.tool_id = t.id AND c.kind = 'profile_when_to_use'), '')), 'C')
            || setweight(CASE WHEN g.lang = 'english'::regconfig
                              THEN toolgate_text_vector('english', coalesce(p.mixed, '') || gl.text)
                              ELSE toolgate_field_vector(g.lang, coalesce(p.keys, '') || gl.text, coalesce(p.descs, '')) END, 'D')
               AS doc,
               coalesce((SELECT array_agg(DISTINCT tag) FROM (
                   SELECT lower(btrim(x, E' \t\r\n"[]')) AS tag
                   FROM tool_components c, regexp_split_to_table(c.text, '[,;\n]') x
                   WHERE c.tool_id = t.id AND c.kind = 'profile_tags') s
                   WHERE tag <> ''), '{}') AS tags,
               ARRAY[toolgate_name_key(t.name), toolgate_name_key(t.original_name)] AS name_keys
        FROM tools t
        -- OFFSET 0: detected once per tool (a subquery pulled up would repeat the call at each use)
        CROSS JOIN LATERAL (SELECT toolgate_detect_language(coalesce(t.title, '') || ' ' || t.description) AS lang OFFSET 0) g
        -- the parameters: names and descriptions in schema order (mixed, an English document's
        -- field), or names and descriptions apart (keys in English, descs in the tool's language)
        CROSS JOIN LATERAL (
            SELECT string_agg(toolgate_name_key(p.key) || ' ' || coalesce(p.value ->> 'description', ''), ' ') AS mixed,
                   string_agg(toolgate_name_key(p.key), ' ') AS keys,
                   string_agg(coalesce(p.value ->> 'description', ''), ' ') AS descs
            FROM jsonb_each(CASE WHEN jsonb_typeof(t.input_schema -> 'properties') = 'object'
                                 THEN t.input_schema -> 'properties' ELSE '{}'::jsonb END) p) p
        -- English words added by the enrichment: the knowledge expansion of its key terms
        -- (internal/enrich/expansion.go) and the glosses of its Chinese words (gloss.go)
        CROSS JOIN LATERAL (
            SELECT coalesce(' ' || string_agg(c.text, ' ' ORDER BY c.kind, c.ordinal), '') AS text FROM tool_components c
            WHERE c.tool_id = t.id AND c.kind IN ('expansion', 'gloss')) gl
        WHERE t.id = ANY (ids) AND t.enabled AND t.review_state = 'approved'
    ) d
    CROSS JOIN LATERAL (
        SELECT array_agg(u.lexeme ORDER BY u.lexeme) AS lexemes, array_agg(u.tf ORDER BY u.lexeme) AS tfs,
               sum(u.tf)::real AS len
        FROM (SELECT v.lexeme, (SELECT sum(toolgate_field_weight(w)) FROM unnest(v.weights) w)::real AS tf
              FROM unnest(d.doc) v) u
    ) x
$$;

-- Writes the postings of the given tools' documents (search_docs), with impacts computed
-- with the average document length avgdl. Their old postings must be gone.
CREATE OR REPLACE FUNCTION toolgate_search_write_postings(ids bigint[], avgdl double precision) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO search_postings (lexeme, tool_id, source_id, impact)
    SELECT u.lexeme, d.tool_id, d.source_id, toolgate_bm25_impact(u.tf, d.doc_len, avgdl)
    FROM search_docs d, unnest(d.lexemes, d.tfs) u (lexeme, tf)
    WHERE d.tool_id = ANY (ids)
$$;

-- Recomputes the index rows of the given tools from the current tools and tool_components
-- rows: idempotent. Called only by the indexer, under its lock. The statistics are kept
-- twice, corpus-wide (search_lexemes, search_corpus, search_languages) and per source
-- (search_source_lexemes, search_source_corpus, search_source_languages: what a search key
-- restricted to some sources scores and analyses its query with,
-- docs/auth.md#search-statistics), from the same per-source counts.
CREATE OR REPLACE FUNCTION toolgate_search_refresh(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    zeroed     text[];
    zeroed_lex text[];
    zeroed_src bigint[];
    avgdl      double precision;
BEGIN
    -- take back what the tools contributed
    WITH old AS (
        SELECT u.lexeme, d.source_id, count(*) AS n
        FROM search_docs d, unnest(d.lexemes) u (lexeme)
        WHERE d.tool_id = ANY (ids)
        GROUP BY u.lexeme, d.source_id
    ), dec AS (
        UPDATE search_lexemes l SET df = l.df - o.n
        FROM (SELECT old.lexeme, sum(old.n) AS n FROM old GROUP BY old.lexeme) o
        WHERE l.lexeme = o.lexeme
        RETURNING l.lexeme, l.df
    ), sdec AS (
        UPDATE search_source_lexemes l SET df = l.df - old.n
        FROM old WHERE l.lexeme = old.lexeme AND l.source_id = old.source_id
        RETURNING l.lexeme, l.source_id, l.df
    )
    SELECT (SELECT array_agg(dec.lexeme) FROM dec WHERE dec.df <= 0),
           s.lex, s.src
    INTO zeroed, zeroed_lex, zeroed_src
    FROM (SELECT array_agg(sdec.lexeme ORDER BY sdec.lexeme, sdec.source_id) AS lex,
                 array_agg(sdec.source_id ORDER BY sdec.lexeme, sdec.source_id) AS src
          FROM sdec WHERE sdec.df <= 0) s;
    WITH old AS (
        SELECT d.source_id, d.language, count(*) AS n FROM search_docs d WHERE d.tool_id = ANY (ids)
        GROUP BY d.source_id, d.language
    ), ldec AS (
        UPDATE search_source_languages l SET docs = l.docs - old.n
        FROM old WHERE l.source_id = old.source_id AND l.language = old.language
    )
    UPDATE search_languages l SET docs = l.docs - o.n
    FROM (SELECT old.language, sum(old.n) AS n FROM old GROUP BY old.language) o
    WHERE l.language = o.language;
    WITH gone AS (
        DELETE FROM search_docs WHERE tool_id = ANY (ids) RETURNING source_id, doc_len
    ), sgone AS (
        UPDATE search_source_corpus c SET docs = c.docs - g.n, total_len = c.total_len - g.len
        FROM (SELECT gone.source_id, count(*) AS n, sum(gone.doc_len::float8) AS len FROM gone GROUP BY gone.source_id) g
        WHERE c.source_id = g.source_id
    )
    UPDATE search_corpus
       SET docs = docs - (SELECT count(*) FROM gone),
           total_len = total_len - (SELECT coalesce(sum(doc_len), 0) FROM gone);
    DELETE FROM search_postings WHERE tool_id = ANY (ids);

    -- and add what they contribute now
    INSERT INTO search_docs (tool_id, source_id, lexemes, tfs, doc_len, tags, name_keys, language)
    SELECT * FROM toolgate_search_document(ids);
    INSERT INTO search_languages (language, docs)
    SELECT d.language, count(*) FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.language
    ON CONFLICT (language) DO UPDATE SET docs = search_languages.docs + EXCLUDED.docs;
    DELETE FROM search_languages WHERE docs <= 0;
    INSERT INTO search_source_languages (source_id, language, docs)
    SELECT d.source_id, d.language, count(*) FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.source_id, d.language
    ON CONFLICT (source_id, language) DO UPDATE SET docs = search_source_languages.docs + EXCLUDED.docs;
    DELETE FROM search_source_languages WHERE docs <= 0;
    UPDATE search_corpus
       SET docs = docs + s.n, total_len = total_len + s.len, name_words = greatest(name_words, s.words)
      FROM (SELECT count(*) AS n, coalesce(sum(doc_len), 0) AS len,
                   coalesce(max((SELECT max(cardinality(string_to_array(k, ' '))) FROM unnest(name_keys) k)), 0) AS words
            FROM search_docs WHERE tool_id = ANY (ids)) s;
    UPDATE search_corpus
       SET impact_avgdl = CASE WHEN docs > 0 THEN total_len / docs ELSE 0 END
     WHERE impact_avgdl = 0;
    SELECT CASE WHEN docs > 0 THEN total_len / docs ELSE 1 END INTO avgdl FROM search_corpus;
    INSERT INTO search_source_corpus (source_id, docs, total_len)
    SELECT d.source_id, count(*), sum(d.doc_len::float8) FROM search_docs d WHERE d.tool_id = ANY (ids) GROUP BY d.source_id
    ON CONFLICT (source_id) DO UPDATE
        SET docs = search_source_corpus.docs + EXCLUDED.docs, total_len = search_source_corpus.total_len + EXCLUDED.total_len;
    -- the sources no indexed tool has any more
    DELETE FROM search_source_corpus WHERE docs <= 0;

    PERFORM toolgate_search_write_postings(ids, avgdl);

    WITH new AS (
        SELECT u.lexeme, d.source_id, count(*) AS n
        FROM search_docs d, unnest(d.lexemes) u (lexeme)
        WHERE d.tool_id = ANY (ids)
        GROUP BY u.lexeme, d.source_id
    ), sinc AS (
        INSERT INTO search_source_lexemes (lexeme, source_id, df)
        SELECT new.lexeme, new.source_id, new.n FROM new
        ON CONFLICT (lexeme, source_id) DO UPDATE SET df = search_source_lexemes.df + EXCLUDED.df
    )
    INSERT INTO search_lexemes (lexeme, df)
    SELECT new.lexeme, sum(new.n) FROM new GROUP BY new.lexeme
    ON CONFLICT (lexeme) DO UPDATE SET df = search_lexemes.df + EXCLUDED.df;
    -- the lexemes no document has any more, corpus-wide and in a source
    IF zeroed IS NOT NULL THEN
        DELETE FROM search_lexemes WHERE lexeme = ANY (zeroed) AND df <= 0;
    END IF;
    IF zeroed_lex IS NOT NULL THEN
        DELETE FROM search_source_lexemes l
        USING unnest(zeroed_lex, zeroed_src) AS z (lexeme, source_id)
        WHERE l.lexeme = z.lexeme AND l.source_id = z.source_id AND l.df <= 0;
    END IF;
END $$;

-- The indexer's step: takes the writer lock, claims up to max_tools queued tools (oldest
-- first) and recomputes their index rows. Returns the ids of the tools indexed (empty: the
-- queue was empty), whose meanings the indexer then writes in the same transaction
-- (internal/lexical). A crash before commit leaves the queue as it was.
CREATE OR REPLACE FUNCTION toolgate_search_index(max_tools integer) RETURNS bigint[]
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    PERFORM pg_advisory_xact_lock(7250011);
    SELECT array_agg(DISTINCT q.tool_id) INTO ids
    FROM (SELECT tool_id FROM search_queue ORDER BY id LIMIT max_tools) q;
    IF ids IS NULL THEN
        RETURN '{}';
    END IF;
    -- every queued row of these tools: their changes committed before this statement, so
    -- the refresh below (later statements, later snapshots) sees them
    DELETE FROM search_queue WHERE tool_id = ANY (ids);
    PERFORM toolgate_search_refresh(ids);
    RETURN ids;
END $$;

-- Recomputes the impacts of the postings of up to n indexed tools with ids above after_id,
-- with the average document length avgdl, under the writer lock. Returns the last tool id
-- done (NULL when there was none). The caller passes the same avgdl to every batch and then
-- records it in search_corpus.impact_avgdl.
CREATE OR REPLACE FUNCTION toolgate_search_reimpact(after_id bigint, n integer, avgdl double precision) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    PERFORM pg_advisory_xact_lock(7250011);
    SELECT array_agg(tool_id ORDER BY tool_id) INTO ids
    FROM (SELECT tool_id FROM search_docs WHERE tool_id > after_id ORDER BY tool_id LIMIT n) d;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    DELETE FROM search_postings WHERE tool_id = ANY (ids);
    PERFORM toolgate_search_write_postings(ids, avgdl);
    RETURN ids[cardinality(ids)];
END $$;

-- Queue triggers: statement-level with transition tables, so a statement writing many rows
-- queues them in one insert. (A trigger with transition tables may have only one event,
-- hence three per table.)
CREATE OR REPLACE FUNCTION toolgate_tools_search_queue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_queue (tool_id) SELECT id FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO search_queue (tool_id) SELECT id FROM old_rows;
    ELSE
        INSERT INTO search_queue (tool_id)
        SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE (n.name, n.original_name, n.title, n.description, n.input_schema, n.enabled, n.review_state, n.source_id)
              IS DISTINCT FROM
              (o.name, o.original_name, o.title, o.description, o.input_schema, o.enabled, o.review_state, o.source_id);
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER tools_search_queue_insert AFTER INSERT ON tools
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_tools_search_queue();
CREATE OR REPLACE TRIGGER tools_search_queue_update AFTER UPDATE ON tools
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_tools_search_queue();
CREATE OR REPLACE TRIGGER tools_search_queue_delete AFTER DELETE ON tools
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_tools_search_queue();

-- Only the component kinds that are part of the lexical document queue their tool.
CREATE OR REPLACE FUNCTION toolgate_components_search_queue() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    kinds constant text[] := ARRAY['question', 'observed', 'topics', 'profile_tags', 'profile_function',
                                   'profile_when_to_use', 'gloss', 'expansion'];
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_queue (tool_id) SELECT DISTINCT tool_id FROM new_rows WHERE kind = ANY (kinds);
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO search_queue (tool_id) SELECT DISTINCT tool_id FROM old_rows WHERE kind = ANY (kinds);
    ELSE
        INSERT INTO search_queue (tool_id)
        SELECT DISTINCT n.tool_id FROM new_rows n JOIN old_rows o
          ON o.tool_id = n.tool_id AND o.kind = n.kind AND o.ordinal = n.ordinal
        WHERE (n.kind = ANY (kinds) OR o.kind = ANY (kinds)) AND n.text IS DISTINCT FROM o.text;
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER tool_components_search_queue_insert AFTER INSERT ON tool_components
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_components_search_queue();
CREATE OR REPLACE TRIGGER tool_components_search_queue_update AFTER UPDATE ON tool_components
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_components_search_queue();
CREATE OR REPLACE TRIGGER tool_components_search_queue_delete AFTER DELETE ON tool_components
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_components_search_queue();
