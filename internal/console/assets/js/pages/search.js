// Search playground: /ui/search?q=&sources=&profile=&mode=&plan=&k=&why=. The form's fields
// are the URL's; submitting it moves to the URL of the search, which runs it. why names a
// tool to explain whether or not the search returns it ("Why not…?", explain_tools).

import {post, ApiError, getKey} from '../api.js';
import {h, errorBox, notice, section, badge, fmtNum, pre, json, dl} from '../dom.js';
import {shares} from '../chart.js';

const modes = ['hybrid', 'lexical', 'vector'];
// defaultK is the Results field's value when the URL has no k.
const defaultK = 10;
const plans = [['', 'key default'], ['none', 'none'], ['rewrite', 'rewrite'], ['decompose', 'decompose'], ['full', 'full']];

// requestOf is the POST /search body the URL's parameters ask for.
function requestOf(p) {
  const body = {query: p.get('q') || ''};
  // The form shows 10 results when the URL names none: ask for them, not the server's default.
  const k = parseInt(p.get('k') || '', 10);
  body.k = k > 0 ? k : defaultK;
  if (p.get('mode')) {
    body.mode = p.get('mode');
  }
  const sources = (p.get('sources') || '').split(',').map(x => x.trim()).filter(Boolean);
  if (sources.length > 0) {
    body.sources = sources;
  }
  if (p.get('profile')) {
    body.profile = p.get('profile');
  }
  if (p.get('plan')) {
    body.plan = p.get('plan');
  }
  body.format = 'raw';
  if (p.get('why')) {
    body.explain_tools = [p.get('why').trim()];
  }
  return body;
}

function select(id, options, value) {
  return h('select', {id, name: id}, options.map(([v, label]) => h('option', {value: v, selected: v === value}, label)));
}

function field(label, control) {
  return h('label', {class: 'field'}, h('span', {}, label), control);
}

function form(p, ctx) {
  const q = h('input', {id: 'q', name: 'q', type: 'search', value: p.get('q') || '', placeholder: 'what the agent needs, e.g. weather in Paris tomorrow', required: true, autofocus: true});
  const sources = h('input', {id: 'sources', name: 'sources', value: p.get('sources') || '', placeholder: 'all'});
  const profile = h('input', {id: 'profile', name: 'profile', value: p.get('profile') || '', placeholder: 'active'});
  const k = h('input', {id: 'k', name: 'k', type: 'number', min: 1, max: 100, value: p.get('k') || String(defaultK)});
  const mode = select('mode', modes.map(m => [m, m]), p.get('mode') || 'hybrid');
  const plan = select('plan', plans, p.get('plan') || '');
  const f = h('form', {id: 'search-form', class: 'search-form'},
    h('div', {class: 'row'}, q, h('button', {type: 'submit', id: 'search-go'}, 'Search')),
    h('div', {class: 'row options'},
      field('Sources', sources), field('Profile', profile), field('Mode', mode), field('Plan', plan), field('Results', k)));
  f.addEventListener('submit', e => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const [name, el] of [['q', q], ['sources', sources], ['profile', profile], ['mode', mode], ['plan', plan], ['k', k]]) {
      const v = el.value.trim();
      if (v && !(name === 'mode' && v === 'hybrid') && !(name === 'k' && v === String(defaultK))) {
        next.set(name, v);
      }
    }
    ctx.navigate('/ui/search?' + next.toString());
  });
  return f;
}

export async function render(root, ctx) {
  const p = ctx.url.searchParams;
  ctx.setTitle(p.get('q') ? `Search: ${p.get('q')}` : 'Search');
  root.append(h('h1', {}, 'Search playground'), form(p, ctx));
  if (ctx.who.kind === 'search') {
    root.append(h('p', {class: 'muted'}, ctx.who.sources ? `Your key searches the sources ${ctx.who.sources.join(', ')}.` : 'Your key searches every source.'));
  }
  const out = h('div', {id: 'search-results'});
  root.append(out);
  if (!p.get('q')) {
    return;
  }
  out.append(h('p', {class: 'muted loading'}, 'Searching…'));
  const body = requestOf(p);
  let sent = {...body, explain: true};
  let resp;
  try {
    try {
      resp = await post('/search', sent, {signal: ctx.signal});
    } catch (err) {
      // A server without explanations refuses the unknown field: search without it.
      if (!(err instanceof ApiError && err.status === 400 && /explain/.test(err.message))) {
        throw err;
      }
      sent = body;
      resp = await post('/search', sent, {signal: ctx.signal});
    }
  } catch (err) {
    if (err.name === 'AbortError') {
      return;
    }
    out.replaceChildren(errorBox(err));
    return;
  }
  out.replaceChildren(...results(resp, sent, ctx));
}

function results(resp, sent, ctx) {
  const nodes = [];
  if (!sent.explain) {
    nodes.push(notice('Explanations unavailable: this server does not take "explain"; the results show their ranks and BM25 only.', 'warn explain-off'));
  }
  if (resp.degraded) {
    nodes.push(notice('Degraded: ' + resp.degraded, 'warn'));
  }
  if (resp.experiment) {
    nodes.push(notice(`Served by experiment ${resp.experiment.id}, arm ${resp.experiment.arm} (profile ${resp.experiment.profile}).`));
  }
  const ex = resp.explain;
  nodes.push(h('p', {class: 'muted'}, `${resp.results.length} tools · mode ${resp.mode} · search #${resp.search_id}` +
    (ex ? ` · profile ${ex.profile} · fusion ${ex.fusion}` : '')));
  nodes.push(h('ol', {class: 'results', id: 'results'}, resp.results.map(r => result(r, ctx))));
  nodes.push(whyNotForm(ctx));
  for (const t of resp.explained_tools || []) {
    nodes.push(whyNot(t, ctx));
  }
  const plan = (ex && ex.plan) || resp.plan;
  if (plan) {
    nodes.push(planSection(plan));
  }
  if (ex) {
    nodes.push(explainSection(ex));
  }
  nodes.push(h('details', {class: 'raw', id: 'search-json'},
    h('summary', {}, 'This search as JSON and curl'),
    h('h3', {}, 'curl'), pre(curlOf(sent), 'curl'),
    h('h3', {}, 'Request'), json(sent),
    h('h3', {}, 'Response'), json(resp)));
  return nodes;
}

function result(r, ctx) {
  const name = ctx.admin ? h('a', {href: '/ui/tool/' + encodeURIComponent(r.name), class: 'tool-name'}, r.name) : h('span', {class: 'tool-name'}, r.name);
  const desc = r.tool && typeof r.tool.description === 'string' ? r.tool.description : '';
  return h('li', {class: 'result'},
    h('div', {class: 'result-head'}, name, ' ', badge(r.source), r.name_match ? badge('name match', 'ok') : null,
      h('span', {class: 'score'}, 'score ' + fmtNum(r.score, 4))),
    h('p', {class: 'desc'}, desc),
    r.explanation ? explanation(r.explanation) : ranks(r));
}

// ranks is what every result says of itself without an explanation.
function ranks(r) {
  const parts = [];
  parts.push(r.lexical_rank ? `lexical #${r.lexical_rank} · BM25 ${fmtNum(r.bm25, 2)}` : 'lexical: not ranked');
  parts.push(r.vector_rank ? `vector #${r.vector_rank}` : 'vector: not ranked');
  if (r.intent !== undefined && r.intent !== null) {
    parts.push(taskLabel(r.intent));
  }
  if (r.rerank_score !== undefined) {
    parts.push(`rerank ${fmtNum(r.rerank_score, 3)}`);
  }
  return h('p', {class: 'why muted'}, parts.join(' · '));
}

function explanation(e) {
  const lex = e.lexical;
  const vec = e.vector;
  // the meaning branch's, when it ran and scored the tool (docs/search.md#meaning)
  const mea = e.meaning;
  const lines = [];
  const parts = [lex ? `lexical ${fmtNum(lex.share, 3)}` : null, vec ? `vector ${fmtNum(vec.share, 3)}` : null,
    mea ? `meaning ${fmtNum(mea.share, 3)}` : null].filter(Boolean);
  const bar = [{label: 'lexical', value: lex ? lex.share : 0}, {label: 'vector', value: vec ? vec.share : 0}];
  if (mea) {
    bar.push({label: 'meaning', value: mea.share});
  }
  lines.push(h('div', {class: 'why-line'}, h('b', {}, 'fused ' + fmtNum(e.fused_score, 3)), ' ',
    shares(bar), ' ',
    parts.length ? '= ' + parts.join(' + ') : '', e.name_match ? ' · name match' : ''));
  if (lex) {
    lines.push(h('div', {class: 'why-line'}, h('span', {class: 'branch series-0-text'}, 'lexical'),
      `${lex.rank === null || lex.rank === undefined ? '' : ` #${lex.rank} ·`} BM25 ${fmtNum(lex.bm25, 2)} · `,
      (lex.terms || []).length === 0 ? 'no terms' : h('span', {class: 'terms'}, lex.terms.map(t =>
        h('span', {class: 'term', title: `idf ${fmtNum(t.idf, 2)} · tf ${t.tf}`}, h('b', {}, t.term), ' in ', (t.fields || []).join(', '))))));
  } else {
    lines.push(h('div', {class: 'why-line muted'}, 'lexical: not ranked'));
  }
  if (vec) {
    // a lexical candidate the nearest-neighbour search did not return is scored all the same
    const rank = vec.rank === null || vec.rank === undefined ? ' not among the nearest ·' : ` #${vec.rank} ·`;
    lines.push(h('div', {class: 'why-line'}, h('span', {class: 'branch series-1-text'}, 'vector'),
      `${rank} similarity ${fmtNum(vec.similarity, 3)}`));
  } else {
    lines.push(h('div', {class: 'why-line muted'}, 'vector: not ranked'));
  }
  if (mea) {
    lines.push(h('div', {class: 'why-line'}, h('span', {class: 'branch series-2-text'}, 'meaning'), ` share ${fmtNum(mea.share, 3)}`));
  }
  if (e.task) {
    lines.push(h('div', {class: 'why-line'}, h('span', {class: 'branch'}, 'task'), ` ${e.task.intent + 1}: ${e.task.text}`));
  }
  // the curation rules that pinned or boosted it (docs/curations.md)
  for (const r of e.rules || []) {
    lines.push(h('div', {class: 'why-line rule'}, h('span', {class: 'branch'}, 'rule'),
      ` ${r.id}: ${r.action === 'pin' ? 'pinned at #' + r.position : 'boosted ×' + r.boost}`));
  }
  return h('div', {class: 'why explanation'}, lines);
}

// whyNotForm asks for a tool's name and moves to the same search explaining that tool.
function whyNotForm(ctx) {
  const p = ctx.url.searchParams;
  const name = h('input', {id: 'whynot', name: 'why', value: p.get('why') || '', placeholder: 'a tool name, e.g. acme__send_email', required: true});
  const f = h('form', {id: 'whynot-form', class: 'search-form'},
    h('div', {class: 'row'}, field('Why not…?', name), h('button', {type: 'submit', id: 'whynot-go'}, 'Explain')));
  f.addEventListener('submit', e => {
    e.preventDefault();
    const next = new URLSearchParams(p);
    next.set('why', name.value.trim());
    ctx.navigate('/ui/search?' + next.toString());
  });
  return f;
}

// whyNot shows where the search put a named tool and why (docs/explain.md#why-not).
function whyNot(t, ctx) {
  let where;
  if (t.returned) {
    where = `returned at #${t.rank}`;
  } else if (t.rank) {
    where = `ranked #${t.rank}${t.intent !== undefined && t.intent !== null ? ' in ' + taskLabel(t.intent) : ''} · score ${fmtNum(t.score, 4)}`;
  } else {
    where = 'not ranked';
  }
  const name = ctx.admin && t.explanation ? h('a', {href: '/ui/tool/' + encodeURIComponent(t.name), class: 'tool-name'}, t.name) : h('span', {class: 'tool-name'}, t.name);
  return h('section', {class: 'whynot', id: 'whynot-answer'},
    h('h2', {}, 'Why not ', name, '?'),
    h('p', {class: 'whynot-where'}, where),
    (t.reasons || []).length ? h('ul', {class: 'plain whynot-reasons'}, t.reasons.map(r =>
      h('li', {class: 'reason'}, badge(r.code, r.code === 'below_k' ? '' : 'warn'), ' ', r.message))) : null,
    t.explanation ? explanation(t.explanation) : null);
}

function planSection(plan) {
  return section('Plan',
    dl([['Planner', plan.planner], ['Mode', plan.mode], ['Original', plan.original], ['Rewritten', plan.rewritten !== plan.original ? plan.rewritten : ''],
      ['Fallback', plan.fallback]]),
    h('ol', {class: 'intents'}, (plan.intents || []).map(i =>
      h('li', {}, i.query, (i.variants || []).length ? h('span', {class: 'muted'}, ' · variants: ' + i.variants.join(' | ')) : null))));
}

function explainSection(ex) {
  const w = ex.weights || {};
  return section('How the score was made',
    dl([['Profile', ex.profile], ['Fusion', ex.fusion], ['Weights', Object.entries(w).map(([k, v]) => `${k} ${v}`).join(', ')],
      // a vector list whose best similarity is below τ weighs less (docs/search.md#vector-confidence)
      ['Vector confidence', ex.vector_confidence ? `τ ${ex.vector_confidence}` : 'off']]),
    h('ul', {class: 'plain'}, (ex.texts || []).map(t =>
      h('li', {}, `${taskLabel(t.intent)}: ${t.text}`, h('span', {class: 'muted'}, ' · lexemes: ' + (t.terms || []).join(', '))))));
}

// taskLabel names a plan intent (0-based in the API) as the plan's list numbers it.
function taskLabel(intent) {
  return `task ${intent + 1}`;
}

// curlOf is the curl command of the same request (the key left as $TOOLGATE_KEY).
function curlOf(body) {
  const quote = t => "'" + t.replace(/'/g, "'\\''") + "'";
  let cmd = `curl -s ${location.origin}/search`;
  if (getKey()) {
    cmd += ' -H "Authorization: Bearer $TOOLGATE_KEY"';
  }
  return cmd + ` -H 'Content-Type: application/json' \\\n  -d ${quote(JSON.stringify(body))}`;
}
