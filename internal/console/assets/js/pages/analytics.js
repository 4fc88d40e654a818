// Analytics: /ui/analytics?days=7[&tenant=acme]. Each section reads one /admin/analytics
// endpoint and shows its data, or its error, by itself; the tenant narrows what the catalog
// learned to one tenant's searches and memories.

import {get, query} from '../api.js';
import {h, fill, table, section, fmtInt, fmtNum, fmtPct, fmtTime, fmtDuration, compact} from '../dom.js';
import {lineChart} from '../chart.js';

const windows = [1, 7, 30, 90];
const LIMIT = 20;

function filters(f) {
  if (!f || Object.keys(f).length === 0) {
    return h('span', {class: 'muted'}, 'none');
  }
  return h('code', {}, compact(f, 160));
}

// seriesOf groups rows into line series, one per key(row), of [time, value(row)] points;
// a row without a value (an MRR of a day without labels) is no point.
function seriesOf(rows, key, time, value) {
  const groups = new Map();
  for (const r of rows) {
    if (value(r) === null || value(r) === undefined) {
      continue;
    }
    const k = key(r);
    if (!groups.has(k)) {
      groups.set(k, []);
    }
    groups.get(k).push([time(r), value(r)]);
  }
  return [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0])).map(([name, points]) => ({name, points}));
}

export async function render(root, ctx) {
  let days = parseInt(ctx.url.searchParams.get('days') || '7', 10);
  if (!(days >= 1 && days <= 90)) {
    days = 7;
  }
  const tenant = ctx.url.searchParams.get('tenant');
  ctx.setTitle(`Analytics, ${days} days`);
  root.append(h('h1', {}, 'Analytics'),
    h('p', {class: 'window'}, 'Window: ', windows.map(d => [d === days ?
      h('b', {'aria-current': 'true'}, d === 1 ? '1 day' : `${d} days`) : h('a', {href: '/ui/analytics' + query({days: d, tenant})}, d === 1 ? '1 day' : `${d} days`), ' '])));
  const opts = {signal: ctx.signal};
  const bucket = days <= 2 ? 'hour' : 'day';
  const parts = {
    searches: h('div', {id: 'an-searches'}),
    latency: h('div', {id: 'an-latency'}),
    profiles: h('div', {id: 'an-profiles'}),
    learning: h('div', {id: 'an-learning'}),
    zero: h('div', {id: 'an-zero'}),
    low: h('div', {id: 'an-low'}),
    top: h('div', {id: 'an-top'}),
    slowest: h('div', {id: 'an-slowest'}),
    tools: h('div', {id: 'an-tools'}),
  };
  root.append(
    section('Searches over time', parts.searches),
    section('Latency', parts.latency),
    section('Label rate and MRR by profile', parts.profiles),
    section('What the catalog learned', parts.learning),
    section('Zero-result queries', parts.zero),
    section('Low-score queries', parts.low),
    section('Top queries', parts.top),
    section('Slowest searches', parts.slowest),
    section('Tools', parts.tools));
  const a = (path, params) => () => get('/admin/analytics/' + path + query(params), opts);
  await Promise.all([
    fill(parts.searches, a('searches', {days, bucket}), searches),
    fill(parts.latency, a('latency', {days, bucket}), latency),
    fill(parts.profiles, a('profiles', {days}), profileCharts),
    fill(parts.learning, a('learning', {days, tenant}), d => [tenantPicker(d, days, ctx), ...learningCharts(d)]),
    fill(parts.zero, a('zero-results', {days, limit: LIMIT}), d => table([
      {title: 'Query', cell: q => searchesLink(q.query, days)},
      {title: 'From', cell: q => q.endpoint},
      {title: 'Filters', cell: q => filters(q.filters)},
      {title: 'Searches', class: 'num', cell: q => fmtInt(q.searches)},
      {title: 'Last seen', cell: q => fmtTime(q.last_seen)},
    ], d.queries, {empty: 'No search without results in this window.'})),
    fill(parts.low, a('low-score', {days, limit: LIMIT}), d => table([
      {title: 'Query', cell: q => searchesLink(q.query, days)},
      {title: 'From', cell: q => q.endpoint},
      {title: 'Mode', cell: q => q.mode},
      {title: 'Filters', cell: q => filters(q.filters)},
      {title: 'Searches', class: 'num', cell: q => fmtInt(q.searches)},
      {title: 'Top score', class: 'num', cell: q => fmtNum(q.top_score, 3)},
      {title: 'Last seen', cell: q => fmtTime(q.last_seen)},
    ], d.queries, {empty: 'No low-score search in this window.'})),
    fill(parts.top, a('top-queries', {days, limit: LIMIT}), d => table([
      {title: 'Query', cell: q => searchesLink(q.query, days)},
      {title: 'Searches', class: 'num', cell: q => fmtInt(q.searches)},
      {title: 'Without results', class: 'num', cell: q => fmtInt(q.zero_result)},
      {title: 'Last seen', cell: q => fmtTime(q.last_seen)},
    ], d.queries, {empty: 'No search in this window.'})),
    fill(parts.slowest, a('slowest', {days, limit: LIMIT}), d => table([
      {title: 'When', cell: q => fmtTime(q.created_at)},
      {title: 'Took', class: 'num', cell: q => fmtDuration(q.latency_ms)},
      {title: 'From', cell: q => q.endpoint},
      {title: 'Mode', cell: q => q.mode},
      {title: 'Query', cell: q => h('a', {class: 'query', href: '/ui/searches/' + q.id}, q.query)},
      {title: 'Results', class: 'num', cell: q => fmtInt(q.result_count)},
    ], d.searches, {empty: 'No search in this window.'})),
    fill(parts.tools, a('tools', {limit: LIMIT}), toolTables),
  ]);
}

function searches(d) {
  const rows = d.buckets || [];
  const t = r => new Date(r.start).getTime();
  const total = rows.reduce((acc, r) => acc + r.searches, 0);
  const zero = rows.reduce((acc, r) => acc + r.zero_result, 0);
  const labelled = rows.reduce((acc, r) => acc + r.labelled, 0);
  const low = rows.reduce((acc, r) => acc + r.low_score, 0);
  const unsure = rows.reduce((acc, r) => acc + r.low_confidence, 0);
  // The failures per bucket, over every endpoint: a search is one of each kind at most.
  const failing = [['without results', r => r.zero_result], ['low confidence', r => r.low_confidence], ['low score', r => r.low_score]]
    .map(([name, v]) => ({name, points: [...sumBy(rows, r => r.start, v)].map(([s, n]) => [new Date(s).getTime(), n])}));
  return [
    h('p', {class: 'muted', id: 'an-searches-summary'}, `${fmtInt(total)} searches · ${fmtInt(zero)} without results · ` +
      `${fmtInt(unsure)} of low confidence (${fmtPct(total ? unsure / total : 0, 1)}) · ${fmtInt(low)} low-score · ${fmtInt(labelled)} labelled`),
    lineChart(seriesOf(rows, r => r.endpoint, t, r => r.searches), {label: 'searches by endpoint', yFormat: v => fmtInt(v), width: 1200}),
    h('h3', {}, 'Searches that failed'),
    h('p', {class: 'muted'}, 'Low confidence: the search returned tools, but its answer said no good match (the agent was told they are guesses). ' +
      'Low score: the rule of the low-score queries below, which counts those and the searches whose first result neither branch ranked first.'),
    lineChart(rows.length ? failing : [], {label: 'searches that failed', yFormat: v => fmtInt(v), width: 1200, height: 180}),
  ];
}

// sumBy sums value(row) per key(row), in the rows' order of keys.
function sumBy(rows, key, value) {
  const out = new Map();
  for (const r of rows) {
    out.set(key(r), (out.get(key(r)) || 0) + value(r));
  }
  return out;
}

// latency draws the 50th, 95th and 99th percentile of every search's latency per bucket.
function latency(d) {
  const rows = d.buckets || [];
  const t = r => new Date(r.start).getTime();
  const series = [['p50', r => r.p50_ms], ['p95', r => r.p95_ms], ['p99', r => r.p99_ms]]
    .map(([name, v]) => ({name, points: rows.map(r => [t(r), v(r)])}));
  return [
    h('p', {class: 'muted'}, 'Time of the query embedding, the search statement and the rerank, every endpoint; read from a histogram, within 19% of the exact percentile.'),
    lineChart(rows.length ? series : [], {label: 'latency percentiles', yFormat: v => fmtDuration(v), width: 1200}),
  ];
}

function profileCharts(d) {
  const rows = d.days || [];
  const t = r => new Date(r.day + 'T00:00:00Z').getTime();
  return h('div', {class: 'two'},
    h('div', {}, h('h3', {}, 'Label rate'),
      lineChart(seriesOf(rows, r => r.profile, t, r => r.label_rate), {label: 'label rate by profile', yFormat: v => fmtPct(v, 0), width: 580, height: 200})),
    h('div', {}, h('h3', {}, 'MRR of labelled searches'),
      h('p', {class: 'muted'}, 'The mean of 1 / rank of the tool the agent used, over the searches it used one of. An experiment also shows the MRR of all its searches, an unlabelled one counting 0.'),
      lineChart(seriesOf(rows, r => r.profile, t, r => r.mrr), {label: 'MRR by profile', yFormat: v => fmtNum(v, 2), width: 580, height: 200})));
}

// tenantPicker chooses whose learning the section shows: every tenant's, or one tenant's
// searches and memories (the operator's is "(operator)" in the API).
function tenantPicker(d, days, ctx) {
  const label = t => t === '(operator)' ? 'the operator' : t;
  const chosen = d.tenant ?? '';
  const tenants = d.tenants || [];
  const pick = h('select', {id: 'an-learning-tenant', name: 'tenant'},
    [['', 'every tenant'], ...(chosen && !tenants.includes(chosen) ? [chosen] : []).concat(tenants).map(t => [t, label(t)])]
      .map(([v, l]) => h('option', {value: v, selected: v === chosen}, l)));
  const f = h('form', {class: 'inline-form', id: 'an-learning-filter'}, h('label', {}, 'Tenant ', pick), h('button', {type: 'submit'}, 'Show'));
  f.addEventListener('submit', e => {
    e.preventDefault();
    ctx.navigate('/ui/analytics' + query({days, tenant: pick.value}));
  });
  return f;
}

// learningCharts draws how the catalog learns from its traffic, per day: of the labelled
// searches, the share whose tool the agent used was ranked first and in the top 5 (a day
// without labels has no point); the memories stored; and the share of the searches a
// memory helped (a result the memory branch scored).
function learningCharts(d) {
  const rows = d.days || [];
  const t = r => new Date(r.day + 'T00:00:00Z').getTime();
  const labelled = rows.filter(r => r.labelled > 0);
  const hits = [['used tool ranked 1st', r => r.hit_1 / r.labelled], ['used tool in the top 5', r => r.hit_5 / r.labelled]]
    .map(([name, v]) => ({name, points: labelled.map(r => [t(r), v(r)])}));
  const searched = rows.filter(r => r.searches > 0);
  const last = rows.length ? rows[rows.length - 1] : null;
  return [
    h('p', {class: 'muted', id: 'an-learning-summary'}, last ? `${fmtInt(last.memories)} memories stored · ` +
      `${fmtInt(rows.reduce((acc, r) => acc + r.labelled, 0))} labelled searches in this window` : 'No day in this window.'),
    h('div', {class: 'three'},
      h('div', {}, h('h3', {}, 'Hit rate of labelled searches'),
        h('p', {class: 'muted'}, 'Of the searches after which the agent used a tool, the share where that tool was ranked first, and in the top 5.'),
        lineChart(labelled.length ? hits : [], {label: 'hit rate of labelled searches', yFormat: v => fmtPct(v, 0), yMax: 1, width: 380, height: 200})),
      h('div', {}, h('h3', {}, 'Memories stored'),
        h('p', {class: 'muted'}, 'The queries of labelled searches kept as memories of the tools they led to, stored by the end of each day.'),
        lineChart(rows.length ? [{name: 'memories', points: rows.map(r => [t(r), r.memories])}] : [],
          {label: 'memories stored', yFormat: v => fmtInt(v), width: 380, height: 200})),
      h('div', {}, h('h3', {}, 'Searches a memory helped'),
        h('p', {class: 'muted'}, 'The share of the searches with a result the memory branch scored.'),
        lineChart(searched.length ? [{name: 'helped by a memory', points: searched.map(r => [t(r), r.memory_helped / r.searches])}] : [],
          {label: 'share of searches a memory helped', yFormat: v => fmtPct(v, 0), width: 380, height: 200}))),
  ];
}

// toolTables shows the three lists of /admin/analytics/tools. "Most called" is in the
// API's order: the most called first, then the most returned. No tool in either the
// popular or the never-returned list means the catalog has no searchable tool.
function toolTables(d) {
  const name = t => h('a', {href: '/ui/tool/' + encodeURIComponent(t.name)}, t.name);
  return h('div', {class: 'three'},
    h('div', {}, h('h3', {}, 'Most called'), table([
      {title: 'Tool', cell: name},
      {title: 'Called', class: 'num', cell: t => fmtInt(t.called)},
      {title: 'Succeeded', class: 'num', cell: t => fmtInt(t.succeeded)},
      {title: 'Returned', class: 'num', cell: t => fmtInt(t.returned)},
      {title: 'First', class: 'num', cell: t => fmtInt(t.returned_first)},
    ], d.popular, {empty: 'No tool returned yet.', cls: 'popular'})),
    h('div', {}, h('h3', {}, 'Returned, never called'), table([
      {title: 'Tool', cell: name},
      {title: 'Returned', class: 'num', cell: t => fmtInt(t.returned)},
    ], d.never_called, {empty: 'Every returned tool was called.'})),
    h('div', {}, h('h3', {}, 'Never returned'), table([
      {title: 'Tool', cell: name},
      {title: 'Source', cell: t => t.source},
    ], d.never_returned, {empty: d.popular.length === 0 ? 'The catalog has no searchable tool.' : 'Every tool was returned at least once.'})));
}

// searchesLink is a query that links to its recent searches (/ui/searches?q=…).
function searchesLink(text, days) {
  return h('a', {class: 'query', href: '/ui/searches' + query({q: text, days})}, text);
}
