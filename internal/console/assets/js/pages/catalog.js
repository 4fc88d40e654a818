// Catalog: /ui/catalog (the sources) and /ui/catalog/<source>?q=&review_state=&after=&runs_before=
// (one source: its review queue, its tools page by page, its sync runs).

import {get, post, seg, query} from '../api.js';
import {h, fill, table, section, badge, progress, button, errorBox, notice, fmtTime, fmtInt, fmtDuration, dl, compact} from '../dom.js';

const PAGE = 50;
const RUNS = 20;

function syncState(last) {
  if (!last) {
    return h('span', {class: 'muted'}, 'never');
  }
  const kind = last.state === 'succeeded' ? 'ok' : last.state === 'failed' ? 'bad' : 'warn';
  return h('span', {}, badge(last.state, kind), ' ', fmtTime(last.started_at));
}

// failedBadge counts the tools one of whose enrichment steps failed for their current
// definition (stored with what they have).
function failedBadge(s) {
  return s.enrichment_failed ? [' ', badge(`${fmtInt(s.enrichment_failed)} failed`, 'bad')] : null;
}

// pendingBadge says how many tools still wait to be enriched and embedded, or that the
// source is fully enriched (nothing pending, nothing waiting for the lexical index).
function pendingBadge(s) {
  if (s.pending) return [' ', badge(`${fmtInt(s.pending)} pending`, 'warn')];
  return s.fully_enriched && s.tools ? [' ', badge('fully enriched', 'ok')] : null;
}

export async function renderSources(root, ctx) {
  ctx.setTitle('Catalog');
  root.append(h('h1', {}, 'Catalog'));
  const body = h('div', {id: 'sources'});
  root.append(body);
  await fill(body, () => get('/v1/sources', {signal: ctx.signal}), data => table([
    {title: 'Source', cell: s => h('a', {href: '/ui/catalog/' + seg(s.name), class: 'source-link'}, s.name)},
    {title: 'Kind', cell: s => s.kind},
    {title: 'Tools', class: 'num', cell: s => fmtInt(s.tools)},
    {title: 'Enriched', cell: s => [progress(s.enriched, s.tools), failedBadge(s), pendingBadge(s)]},
    {title: 'Embedded', cell: s => progress(s.embedded, s.tools)},
    {title: 'Indexed', cell: s => progress(s.indexed, s.tools)},
    {title: 'Last sync', cell: s => syncState(s.last_sync)},
    {title: 'Review', cell: s => s.review_mode ? badge('review mode', 'warn') : ''},
  ], data.sources, {empty: 'No source yet: import a catalog (toolgate import) or add an MCP server (POST /v1/sources).'}));
}

export async function renderSource(root, ctx) {
  const [name] = ctx.groups;
  const p = ctx.url.searchParams;
  ctx.setTitle(`Source ${name}`);
  root.append(h('p', {class: 'crumbs'}, h('a', {href: '/ui/catalog'}, 'Catalog'), ' / ', name), h('h1', {}, name));
  const head = h('div', {id: 'source-head'});
  const review = h('div', {id: 'review-queue'});
  const tools = h('div', {id: 'tools'});
  const runs = h('div', {id: 'runs'});
  const status = h('div', {class: 'status', id: 'status'});
  root.append(section('Source', head), status, section('Review queue', review), section('Tools', toolFilter(name, p, ctx), tools), section('Sync runs', runs));
  const base = '/v1/sources/' + seg(name);
  const opts = {signal: ctx.signal};
  // after a decision: say what it did, and show the source, its queue and its tools again
  const decided = msg => {
    status.replaceChildren(notice(msg, 'ok'));
    loadHead();
    loadReview();
    loadTools();
  };
  const loadHead = () => fill(head, () => get(base, opts), src => sourceHead(src, status));
  const loadReview = () => fill(review, () => get('/v1/tools' + query({source: name, review_state: 'pending', limit: PAGE}), opts),
    data => reviewQueue(data, status, decided));
  const loadTools = () => fill(tools, () => get('/v1/tools' + query({source: name, review_state: p.get('review_state'), q: p.get('q'),
    after: p.get('after'), limit: PAGE}), opts), data => toolPage(data, name, p));
  await Promise.all([loadHead(), loadReview(), loadTools(),
    fill(runs, () => get(base + '/runs' + query({limit: RUNS, before: p.get('runs_before')}), opts), data => runTable(data, name, p))]);
}

function sourceHead(src, status) {
  const cfg = src.config || {};
  const where = cfg.url || [cfg.command, ...(cfg.args || [])].filter(Boolean).join(' ');
  const nodes = [dl([
    ['Kind', src.kind], ['Server', where], ['Sync interval', src.interval], ['Review mode', src.review_mode ? 'on: changed definitions wait for a decision' : 'off'],
    ['Tools', fmtInt(src.tools)], ['Enriched', [progress(src.enriched, src.tools), failedBadge(src), pendingBadge(src)]], ['Embedded', progress(src.embedded, src.tools)],
    ['Indexed', progress(src.indexed, src.tools)], ['Created', fmtTime(src.created_at)],
  ])];
  if (src.kind !== 'catalog') {
    nodes.push(h('p', {}, button('Sync now', async () => {
      try {
        const r = await post('/v1/sources/' + seg(src.name) + '/sync');
        status.replaceChildren(notice(r.duplicate ? `A sync is already queued or running (job ${r.job_id}).` : `Sync queued (job ${r.job_id}).`, 'ok'));
      } catch (err) {
        status.replaceChildren(errorBox(err));
      }
    }, {id: 'sync-now'})));
  }
  return nodes;
}

function decide(tool, action, status, decided) {
  return button(action === 'approve' ? 'Approve' : 'Reject', async () => {
    try {
      const r = await post('/v1/tools/' + seg(tool.name) + '/' + action);
      decided(action === 'approve' ? `${r.name} approved: its new definition is stored and searchable.` :
        `${r.name}: change rejected; the tool keeps its old definition and stays hidden.`);
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {class: action, 'data-tool': tool.name});
}

function reviewQueue(data, status, decided) {
  return [
    table([
      {title: 'Tool', cell: t => h('a', {href: '/ui/tool/' + seg(t.name)}, t.name)},
      {title: 'Stored definition', cell: t => h('span', {class: 'desc'}, t.description)},
      {title: 'Held since', cell: t => fmtTime(t.updated_at)},
      {title: '', cell: t => h('span', {class: 'actions'}, decide(t, 'approve', status, decided), ' ', decide(t, 'reject', status, decided))},
    ], data.tools, {empty: 'No tool waits for review.'}),
    data.next ? h('p', {class: 'muted'}, `Only the first ${PAGE} are shown.`) : null,
  ];
}

function toolFilter(name, p, ctx) {
  const q = h('input', {name: 'q', value: p.get('q') || '', placeholder: 'part of the name', id: 'tool-q'});
  const rs = h('select', {name: 'review_state', id: 'tool-review-state'},
    [['', 'any review state'], ['approved', 'approved'], ['pending', 'pending']].map(([v, l]) => h('option', {value: v, selected: v === (p.get('review_state') || '')}, l)));
  const f = h('form', {class: 'inline-form'}, q, rs, h('button', {type: 'submit'}, 'Filter'));
  f.addEventListener('submit', e => {
    e.preventDefault();
    ctx.navigate('/ui/catalog/' + seg(name) + query({q: q.value.trim(), review_state: rs.value}));
  });
  return f;
}

function toolStates(t) {
  return h('span', {class: 'states'},
    t.enabled ? null : badge('disabled', 'bad'),
    t.review_state === 'pending' ? badge('pending', 'warn') : null,
    badge(t.enriched ? 'enriched' : 'not enriched', t.enriched ? 'ok' : ''),
    badge(t.embedded ? 'embedded' : 'no vector', t.embedded ? 'ok' : ''));
}

function toolPage(data, name, p) {
  const keep = {q: p.get('q'), review_state: p.get('review_state')};
  return [
    table([
      {title: 'Tool', cell: t => h('a', {href: '/ui/tool/' + seg(t.name)}, t.name)},
      {title: 'Description', cell: t => h('span', {class: 'desc'}, t.title ? `${t.title} — ${t.description}` : t.description)},
      {title: 'State', cell: toolStates},
      {title: 'Updated', cell: t => fmtTime(t.updated_at)},
    ], data.tools, {empty: 'No tool matches.'}),
    h('p', {class: 'pager'},
      p.get('after') ? h('a', {href: '/ui/catalog/' + seg(name) + query(keep)}, '« First page') : null, ' ',
      data.next ? h('a', {href: '/ui/catalog/' + seg(name) + query({...keep, after: data.next}), id: 'tools-next'}, 'Next page »') : null),
  ];
}

function runTable(data, name, p) {
  const dur = r => r.finished_at ? fmtDuration(new Date(r.finished_at) - new Date(r.started_at)) : 'running';
  return [
    table([
      {title: 'Started', cell: r => fmtTime(r.started_at)},
      {title: 'State', cell: r => badge(r.state, r.state === 'succeeded' ? 'ok' : r.state === 'failed' ? 'bad' : 'warn')},
      {title: 'Took', cell: dur},
      {title: 'Created', class: 'num', cell: r => fmtInt(r.created)},
      {title: 'Updated', class: 'num', cell: r => fmtInt(r.updated)},
      {title: 'Deleted', class: 'num', cell: r => fmtInt(r.deleted)},
      {title: 'Unchanged', class: 'num', cell: r => fmtInt(r.unchanged)},
      {title: 'Held', class: 'num', cell: r => fmtInt(r.pending)},
      {title: 'Skipped', class: 'num', cell: r => (r.skipped || []).length ? h('span', {title: compact(r.skipped, 2000)}, fmtInt(r.skipped.length)) : '0'},
      {title: 'Error', cell: r => r.error ? h('span', {class: 'err-text'}, r.error) : ''},
    ], data.runs, {empty: 'No sync run yet.'}),
    h('p', {class: 'pager'},
      p.get('runs_before') ? h('a', {href: '/ui/catalog/' + seg(name)}, '« Newest runs') : null, ' ',
      data.next ? h('a', {href: '/ui/catalog/' + seg(name) + query({runs_before: data.next})}, 'Older runs »') : null),
  ];
}
