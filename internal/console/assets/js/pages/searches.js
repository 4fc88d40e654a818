// Searches: /ui/searches?q=…&days=… (the recent searches of a query, from the retrieval
// log) and /ui/searches/<id> (one search: what it returned, what the agent then called or
// reported, and what its session searched next). Analytics links every query here.

import {get, query, seg} from '../api.js';
import {h, fill, table, section, badge, dl, json, fmtTime, fmtInt, fmtNum, fmtDuration} from '../dom.js';

const LIMIT = 50;

export async function render(root, ctx) {
  const [id] = ctx.groups;
  const opts = {signal: ctx.signal};
  if (id) {
    ctx.setTitle(`Search ${id}`);
    const view = h('div', {id: 'search-detail'});
    root.append(h('p', {class: 'crumbs'}, h('a', {href: '/ui/analytics'}, 'Analytics'), ' / ', h('a', {href: '/ui/searches'}, 'Searches'), ' / ', id),
      h('h1', {}, `Search ${id}`), view);
    await fill(view, () => get('/admin/searches/' + seg(id), opts), detail);
    return;
  }
  const p = ctx.url.searchParams;
  const q = p.get('q') || '';
  const days = p.get('days') || '';
  ctx.setTitle(q ? `Searches: ${q}` : 'Searches');
  const list = h('div', {id: 'searches'});
  root.append(h('p', {class: 'crumbs'}, h('a', {href: '/ui/analytics' + query({days})}, 'Analytics'), ' / Searches'),
    h('h1', {}, q ? ['Searches of ', h('q', {class: 'query'}, q)] : 'Recent searches'),
    h('p', {class: 'muted'}, `The most recent ${LIMIT} searches${q ? ' of this query' : ''} in the last ${days || 7} days, newest first. `,
      q ? h('a', {href: '/ui/search' + query({q})}, 'Search it now') : null),
    list);
  await fill(list, () => get('/admin/searches' + query({q, days, limit: LIMIT}), opts), d => table([
    {title: 'Search', class: 'num', cell: s => h('a', {href: '/ui/searches/' + s.id, class: 'search-link'}, String(s.id))},
    {title: 'When', cell: s => fmtTime(s.created_at)},
    q ? null : {title: 'Query', cell: s => h('span', {class: 'query'}, s.query)},
    {title: 'From', cell: s => s.endpoint},
    {title: 'Mode', cell: s => s.mode},
    {title: 'Profile', cell: s => s.profile},
    {title: 'Results', class: 'num', cell: s => fmtInt(s.result_count)},
    {title: 'Top score', class: 'num', cell: s => fmtNum(s.top_score, 3)},
    {title: 'Took', class: 'num', cell: s => fmtDuration(s.latency_ms)},
    {title: 'Then', cell: s => s.labels ? badge(`used #${s.best_rank}`, s.best_rank === 1 ? 'ok' : 'warn') : h('span', {class: 'muted'}, 'nothing reported')},
    {title: 'Session', cell: s => s.session_id ? h('code', {}, s.session_id) : ''},
  ].filter(Boolean), d.searches, {empty: 'No search of this query in the window.', cls: 'searches'}));
}

function detail(d) {
  const results = d.results || [];
  const used = new Map(d.labels.map(l => [l.tool, l]));
  return [
    section('Request',
      dl([['Query', h('span', {class: 'query'}, d.query)], ['Variants', d.variants.length ? d.variants.join(' · ') : ''],
        ['When', fmtTime(d.created_at)], ['From', d.endpoint], ['Mode', d.mode], ['k', String(d.k)], ['Profile', d.profile],
        ['Experiment', d.experiment ? `${d.experiment} (${d.arm})` : ''], ['Caller', d.caller || ''], ['Session', d.session_id || ''],
        ['Took', fmtDuration(d.latency_ms)]]),
      hasFilters(d.filters) ? [h('h3', {}, 'Filters'), json(d.filters)] : null,
      d.plan ? [h('h3', {}, 'Plan'), json(d.plan)] : null,
      h('p', {}, h('a', {href: '/ui/search' + query({q: d.query, profile: d.profile === '(active)' ? '' : d.profile, mode: d.mode})},
        'Search it again, explained'))),
    section('What it returned', table([
      {title: '#', class: 'num', cell: r => String(results.indexOf(r) + 1)},
      {title: 'Tool', cell: r => [h('a', {href: '/ui/tool/' + seg(r.name), class: 'tool-name'}, r.name), ' ',
        used.has(r.name) ? badge(used.get(r.name).source === 'call' ? 'called' : 'reported', used.get(r.name).success === false ? 'bad' : 'ok') : null]},
      {title: 'Score', class: 'num', cell: r => fmtNum(r.score, 3)},
      {title: 'Lexical', class: 'num', cell: r => r.lexical_rank ? `#${r.lexical_rank} · BM25 ${fmtNum(r.bm25, 2)}` : h('span', {class: 'muted'}, 'not ranked')},
      {title: 'Vector', class: 'num', cell: r => r.vector_rank ? `#${r.vector_rank}` : h('span', {class: 'muted'}, 'not ranked')},
      {title: 'Name match', cell: r => r.name_match ? 'yes' : ''},
    ], results, {empty: 'Nothing: the search found no tool.', cls: 'returned'})),
    section('What the agent then did', table([
      {title: 'Tool', cell: l => h('a', {href: '/ui/tool/' + seg(l.tool)}, l.tool)},
      {title: 'How', cell: l => l.source === 'call' ? 'called it (MCP)' : 'reported it (feedback)'},
      {title: 'Its rank', class: 'num', cell: l => `#${l.rank}`},
      {title: 'Outcome', cell: l => l.success === null || l.success === undefined ? h('span', {class: 'muted'}, 'unknown') :
        l.success ? badge('succeeded', 'ok') : badge('failed', 'bad')},
      {title: 'After', class: 'num', cell: l => fmtDuration(l.delay_ms)},
    ], d.labels, {empty: 'No tool called or reported after this search.', cls: 'labels'}),
    d.session_id ? [h('h3', {}, 'Later in this session'), table([
      {title: 'Search', class: 'num', cell: s => h('a', {href: '/ui/searches/' + s.id}, String(s.id))},
      {title: 'When', cell: s => fmtTime(s.created_at)},
      {title: 'From', cell: s => s.endpoint},
      {title: 'Query', cell: s => h('span', {class: 'query'}, s.query)},
      {title: 'Results', class: 'num', cell: s => fmtInt(s.result_count)},
      {title: 'Then used', cell: s => s.labelled.length ? s.labelled.join(', ') : h('span', {class: 'muted'}, '–')},
    ], d.later, {empty: 'The session searched nothing after this.', cls: 'later'})] : null),
  ];
}

// hasFilters is true when a filter of the search narrowed it (the log keeps empty ones).
function hasFilters(f) {
  return Object.values(f || {}).some(v => v !== null && !(Array.isArray(v) && v.length === 0));
}
