// Curations: /ui/rules. The query rules (pin, hide or boost a tool for the queries a pattern
// matches) and the synonyms, global or of one tenant; a form creates each, Delete removes
// one after a confirmation (docs/curations.md).

import {api, get, post, seg} from '../api.js';
import {h, fill, table, section, badge, confirmButton, errorBox, notice, fmtTime} from '../dom.js';

export async function render(root, ctx) {
  ctx.setTitle('Rules');
  const status = h('div', {class: 'status', id: 'status'});
  const rules = h('div', {id: 'rules'});
  const synonyms = h('div', {id: 'synonyms'});
  const opts = {signal: ctx.signal};
  const reload = () => Promise.all([
    fill(rules, () => get('/admin/rules', opts), d => ruleTable(d.rules, status, reload)),
    fill(synonyms, () => get('/admin/synonyms', opts), d => synonymTable(d.synonyms, status, reload)),
  ]);
  root.append(h('h1', {}, 'Rules'), status,
    h('p', {class: 'muted'}, 'A rule acts on the searches whose query matches its pattern: exact (the same words, in order) ' +
      'or contains (every word of the pattern). Pin puts the tool at a position, hide removes it, boost multiplies its fused score. ' +
      'A rule or synonym with a tenant (a tenant\'s name, or key:<name> for a key\'s own) acts on that tenant\'s search keys only; without one, on every search.'),
    section('New rule', ruleForm(status, reload)),
    section('Rules', rules),
    section('New synonyms', synonymForm(status, reload)),
    section('Synonyms', synonyms));
  await reload();
}

function tenantOf(input) {
  const t = input.value.trim();
  return t === '' ? null : t;
}

function ruleForm(status, reload) {
  const match = h('select', {id: 'rule-match', name: 'match'}, h('option', {value: 'exact'}, 'exact'), h('option', {value: 'contains'}, 'contains'));
  const pattern = h('input', {id: 'rule-pattern', name: 'pattern', required: true, maxlength: 200, placeholder: 'e.g. send an email'});
  const action = h('select', {id: 'rule-action', name: 'action'},
    h('option', {value: 'pin'}, 'pin'), h('option', {value: 'hide'}, 'hide'), h('option', {value: 'boost'}, 'boost'));
  const tool = h('input', {id: 'rule-tool', name: 'tool', required: true, placeholder: 'e.g. acme__send_email'});
  const position = h('input', {id: 'rule-position', name: 'position', type: 'number', min: 1, max: 100, value: '1'});
  const boost = h('input', {id: 'rule-boost', name: 'boost', type: 'number', min: 0.01, max: 100, step: 'any', value: '2'});
  const tenant = h('input', {id: 'rule-tenant', name: 'tenant', placeholder: 'every search'});
  const f = h('form', {id: 'rule-form', class: 'grid-form'},
    h('label', {}, 'Match', match), h('label', {}, 'Pattern', pattern), h('label', {}, 'Action', action),
    h('label', {}, 'Tool', tool), h('label', {}, 'Position (pin)', position), h('label', {}, 'Factor (boost)', boost),
    h('label', {}, 'Tenant', tenant),
    h('button', {type: 'submit', id: 'rule-create'}, 'Create rule'));
  f.addEventListener('submit', async e => {
    e.preventDefault();
    const body = {match: match.value, pattern: pattern.value.trim(), action: action.value, tool: tool.value.trim(), tenant: tenantOf(tenant)};
    if (action.value === 'pin') {
      body.position = parseInt(position.value, 10);
    } else if (action.value === 'boost') {
      body.boost = parseFloat(boost.value);
    }
    try {
      const r = await post('/admin/rules', body);
      status.replaceChildren(notice(`Rule ${r.id} created: ${r.action} ${r.tool} for ${r.match} “${r.pattern}”.`, 'ok'));
      f.reset();
      reload();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  });
  return f;
}

function ruleTable(rules, status, reload) {
  const del = r => confirmButton('Delete', `Delete rule ${r.id} (${r.action} ${r.tool} for “${r.pattern}”)? Searches stop applying it at once.`, async () => {
    try {
      await api('DELETE', '/admin/rules/' + seg(String(r.id)));
      status.replaceChildren(notice(`Rule ${r.id} deleted.`, 'ok'));
      reload();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {class: 'delete-rule', 'data-rule': String(r.id)});
  return table([
    {title: 'Id', class: 'num', cell: r => String(r.id)},
    {title: 'Tenant', cell: r => r.tenant ? r.tenant : h('span', {class: 'muted'}, 'every search')},
    {title: 'Match', cell: r => r.match},
    {title: 'Pattern', cell: r => h('code', {}, r.pattern)},
    {title: 'Action', cell: r => badge(r.action + (r.action === 'pin' ? ' #' + r.position : r.action === 'boost' ? ' ×' + r.boost : ''), r.action === 'hide' ? 'warn' : '')},
    {title: 'Tool', cell: r => h('a', {href: '/ui/tool/' + encodeURIComponent(r.tool)}, r.tool)},
    {title: 'Created', cell: r => fmtTime(r.created_at) + (r.created_by ? ' by ' + r.created_by : '')},
    {title: '', cell: r => del(r)},
  ], rules, {empty: 'No rule yet.', cls: 'rules'});
}

function synonymForm(status, reload) {
  const word = h('input', {id: 'syn-word', name: 'word', required: true, maxlength: 64, placeholder: 'e.g. mail'});
  const syns = h('input', {id: 'syn-synonyms', name: 'synonyms', required: true, placeholder: 'e.g. email, message'});
  const tenant = h('input', {id: 'syn-tenant', name: 'tenant', placeholder: 'every search'});
  const f = h('form', {id: 'synonym-form', class: 'grid-form'},
    h('label', {}, 'Word', word), h('label', {}, 'Synonyms', syns), h('label', {}, 'Tenant', tenant),
    h('button', {type: 'submit', id: 'syn-create'}, 'Save synonyms'));
  f.addEventListener('submit', async e => {
    e.preventDefault();
    const body = {word: word.value.trim(), synonyms: syns.value.split(',').map(x => x.trim()).filter(Boolean), tenant: tenantOf(tenant)};
    try {
      const r = await post('/admin/synonyms', body);
      status.replaceChildren(notice(`Synonyms of ${r.word} saved.`, 'ok'));
      f.reset();
      reload();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  });
  return f;
}

function synonymTable(list, status, reload) {
  const del = s => confirmButton('Delete', `Delete the synonyms of ${s.word}?`, async () => {
    try {
      await api('DELETE', '/admin/synonyms/' + seg(String(s.id)));
      status.replaceChildren(notice(`Synonyms of ${s.word} deleted.`, 'ok'));
      reload();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {class: 'delete-synonyms', 'data-synonyms': String(s.id)});
  return table([
    {title: 'Tenant', cell: s => s.tenant ? s.tenant : h('span', {class: 'muted'}, 'every search')},
    {title: 'Word', cell: s => h('code', {}, s.word)},
    {title: 'Synonyms', cell: s => s.synonyms.join(', ')},
    {title: 'Created', cell: s => fmtTime(s.created_at) + (s.created_by ? ' by ' + s.created_by : '')},
    {title: '', cell: s => del(s)},
  ], list, {empty: 'No synonyms yet.', cls: 'synonyms'});
}
