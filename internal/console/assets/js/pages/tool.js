// One tool: /ui/tool/<name>. Its definition, its enrichment outputs, its components with
// the TDWA weight the active profile gives each kind, what it learned from use (its
// memories), and its definition history.

import {api, get, post, seg, ApiError} from '../api.js';
import {h, fill, table, section, badge, button, confirmButton, errorBox, notice, fmtTime, fmtNum, fmtPct, dl, json, compact} from '../dom.js';
import {bar} from '../chart.js';

export async function render(root, ctx) {
  const [name] = ctx.groups;
  ctx.setTitle(`Tool ${name}`);
  const head = h('div', {id: 'tool'});
  const history = h('div', {id: 'history'});
  const historySection = section('Definition history', history);
  const learned = h('div', {id: 'memories'});
  const learnedStatus = h('div', {class: 'status', id: 'memories-status'});
  const learnedSection = section('What the catalog learned', learnedStatus, learned);
  root.append(head, learnedSection, historySection);
  const opts = {signal: ctx.signal};
  const loadMemories = () => fill(learned, async () => {
    try {
      return await get('/admin/tools/' + seg(name) + '/memories', opts);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        learnedSection.remove();
        return null;
      }
      throw err;
    }
  }, d => memoryView(d, learnedStatus, loadMemories));
  await Promise.all([
    loadMemories(),
    fill(head, () => Promise.all([get('/v1/tools/' + seg(name), opts), get('/admin/profiles', opts)]),
      ([t, ps]) => toolView(t, ps.profiles, ctx)),
    fill(history, async () => {
      try {
        return await get('/v1/tools/' + seg(name) + '/history?limit=20', opts);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          // No such tool: the page shows the tool's 404, and no history section under it.
          historySection.remove();
          return null;
        }
        throw err;
      }
    }, historyTable),
  ]);
}

function toolView(t, profiles, ctx) {
  const status = h('div', {class: 'status'});
  const actions = [];
  actions.push(button(t.enabled ? 'Disable' : 'Enable', () => act(`/admin/tools/${seg(t.name)}/${t.enabled ? 'disable' : 'enable'}`, status, ctx),
    {id: 'toggle-enabled'}));
  if (t.review_state === 'pending') {
    actions.push(button('Approve change', () => act(`/v1/tools/${seg(t.name)}/approve`, status, ctx), {class: 'approve'}),
      button('Reject change', () => act(`/v1/tools/${seg(t.name)}/reject`, status, ctx), {class: 'reject'}));
  }
  const active = profiles.find(p => p.active);
  return [
    h('p', {class: 'crumbs'}, h('a', {href: '/ui/catalog'}, 'Catalog'), ' / ',
      h('a', {href: '/ui/catalog/' + seg(t.source)}, t.source), ' / ', t.original_name),
    h('h1', {}, t.name),
    h('p', {class: 'states'}, t.enabled ? badge('enabled', 'ok') : badge('disabled', 'bad'), ' ',
      t.review_state === 'pending' ? badge('change held for review', 'warn') : badge('approved', 'ok'), ' ',
      badge(t.enrichment.status, t.enrichment.status === 'enriched' ? 'ok' : 'warn')),
    h('p', {class: 'actions'}, actions), status,
    section('Definition',
      dl([['Title', t.title], ['Description', h('span', {class: 'desc', id: 'tool-description'}, t.description)],
        ['Original name', t.original_name], ['Version', t.content_hash], ['Created', fmtTime(t.created_at)], ['Updated', fmtTime(t.updated_at)]]),
      h('h3', {}, 'Input schema'), json(t.input_schema),
      t.output_schema ? [h('h3', {}, 'Output schema'), json(t.output_schema)] : null,
      t.annotations ? [h('h3', {}, 'Annotations'), json(t.annotations)] : null),
    section('Enrichment',
      dl([['Status', t.enrichment.status], ['Vector in the active profile', t.enrichment.has_vector ? 'yes' : 'no']]),
      table([
        {title: 'Step', cell: s => s.step},
        {title: 'Model', cell: s => s.model},
        {title: 'For the current definition', cell: s => [s.current ? 'yes' : badge('stale', 'warn'),
          s.failed ? [' ', badge('failed', 'bad'), ' ', h('span', {class: 'err-text'}, s.failed)] : null]},
        {title: 'Tokens', class: 'num', cell: s => `${s.prompt_tokens} + ${s.completion_tokens}`},
        {title: 'Made', cell: s => fmtTime(s.created_at)},
      ], t.enrichment.steps, {empty: 'Not enriched yet.'}),
      t.profile ? [h('h3', {}, 'Tool-DE profile'), dl(Object.entries(t.profile).map(([k, v]) => [k, fieldText(v)]))] : null,
      h('h3', {}, 'Synthetic questions'),
      t.questions.length ? h('ul', {class: 'plain'}, t.questions.map(q => h('li', {}, q))) : h('p', {class: 'muted'}, 'None.'),
      h('h3', {}, 'Key topics'),
      t.topics.length ? h('p', {}, t.topics.map(x => badge(x))) : h('p', {class: 'muted'}, 'None.')),
    section('Components and TDWA weights', components(t, active)),
  ];
}

// fieldText shows a profile field: a text as it is, a list joined, anything else as JSON.
function fieldText(v) {
  if (typeof v === 'string') {
    return v;
  }
  if (Array.isArray(v) && v.every(x => typeof x === 'string')) {
    return v.join(', ');
  }
  return compact(v, 400);
}

// components lists the tool's components with the weight the active profile gives their
// kind, and each component's share of the tool's vector: weights re-normalised over the
// kinds the tool has, as TDWA combines them, and a kind's share split evenly between its
// components (the questions are averaged into one), so that the shares add up to 100%.
function components(t, active) {
  const weights = active && active.strategy === 'tdwa' ? active.weights : null;
  const kinds = [...new Set(t.components.map(c => c.kind))];
  const weightOf = k => (weights ? weights[k] ?? 0 : null);
  const total = weights ? kinds.reduce((a, k) => a + weightOf(k), 0) : 0;
  const maxW = weights ? Math.max(...Object.values(weights), 0) : 0;
  const count = k => t.components.filter(c => c.kind === k).length;
  const note = !active ? 'No profile is active.' : weights ?
    `Weights of the active profile ${active.name} (tdwa); the share is the kind's part of this tool's vector.` :
    `The active profile ${active.name} uses the ${active.strategy} strategy, which takes no weights.`;
  return [
    h('p', {class: 'muted'}, note),
    table([
      {title: 'Kind', cell: c => c.kind},
      {title: '#', class: 'num', cell: c => String(c.ordinal)},
      {title: 'Text', cell: c => h('span', {class: 'desc'}, c.text)},
      {title: 'Embedded', cell: c => c.has_embedding ? h('span', {title: c.model || ''}, 'yes') : badge('no', 'warn')},
      {title: 'Weight', cell: c => weights ? h('span', {class: 'weight'}, bar(weightOf(c.kind), maxW, `${c.kind}: ${weightOf(c.kind)}`), ' ', fmtNum(weightOf(c.kind), 2)) : '–'},
      {title: 'Share', class: 'num', cell: c => weights && total > 0 ? fmtPct(weightOf(c.kind) / total / count(c.kind)) : '–'},
    ], t.components, {empty: 'No component yet.', cls: 'components'}),
  ];
}

async function act(path, status, ctx) {
  try {
    await post(path);
    ctx.refresh();
  } catch (err) {
    status.replaceChildren(errorBox(err));
  }
}

// memoryView lists the tool's memories: the queries of labelled searches that led to it,
// which now find it for their tenant (docs/learning.md), Forget on each row, which removes
// that one, and Forget what it learned, which removes them all.
function memoryView(d, status, reload) {
  if (!d) {
    return null;
  }
  const forget = confirmButton('Forget what it learned',
    `Remove the ${d.memories.length} memories of ${d.tool}, of every tenant? Searches teach it again from now on.`, async () => {
      try {
        const r = await api('DELETE', '/admin/tools/' + seg(d.tool) + '/memories');
        status.replaceChildren(notice(`${r.tool} forgot ${r.removed} ${r.removed === 1 ? 'memory' : 'memories'}.`, 'ok'));
        reload();
      } catch (err) {
        status.replaceChildren(errorBox(err));
      }
    }, {id: 'forget-memories'});
  const whose = m => m.tenant === '' ? 'the operator and global' : m.tenant;
  const forgetOne = m => confirmButton('Forget',
    `Remove the memory "${m.query}" of ${whose(m)}? Its searches until now teach it nothing again; new ones do.`, async () => {
      try {
        const r = await api('DELETE', '/admin/tools/' + seg(d.tool) + '/memories/' + m.id);
        status.replaceChildren(notice(`${r.tool} forgot "${m.query}" (${r.removed} ${r.removed === 1 ? 'memory' : 'memories'}).`, 'ok'));
        reload();
      } catch (err) {
        status.replaceChildren(errorBox(err));
      }
    }, {class: 'forget-memory'});
  return [
    h('p', {class: 'muted'}, 'The queries of labelled searches that led to this tool: through the memory branch of the search, ' +
      'each now helps find it for its tenant, for queries like it.'),
    table([
      {title: 'Tenant', cell: m => m.tenant === '' ? h('span', {class: 'muted'}, 'operator or global') : m.tenant},
      {title: 'Taught by key', cell: m => m.key || h('span', {class: 'muted'}, '–')},
      {title: 'Query', cell: m => h('a', {class: 'query', href: '/ui/search?q=' + encodeURIComponent(m.query)}, m.query)},
      {title: 'Searches', class: 'num', cell: m => String(m.searches)},
      {title: 'Last labelled', cell: m => fmtTime(m.labelled_at)},
      {title: '', cell: forgetOne},
    ], d.memories, {empty: 'Nothing learned yet: no labelled search has led to this tool.', cls: 'memories'}),
    d.memories.length ? h('p', {class: 'actions'}, forget) : null,
  ];
}

function historyTable(data) {
  if (!data) {
    return null;
  }
  return table([
    {title: 'When', cell: r => fmtTime(r.created_at)},
    {title: 'Change', cell: r => r.action},
    {title: 'Status', cell: r => badge(r.status, r.status === 'pending' ? 'warn' : r.status === 'rejected' ? 'bad' : 'ok')},
    {title: 'Fields', cell: r => (r.changed_fields || []).join(', ')},
    {title: 'From', cell: r => h('code', {}, (r.old_hash || '–').slice(0, 12))},
    {title: 'To', cell: r => h('code', {}, (r.new_hash || '–').slice(0, 12))},
    {title: 'Decided', cell: r => fmtTime(r.decided_at)},
  ], data.revisions, {empty: 'No recorded change.'});
}
