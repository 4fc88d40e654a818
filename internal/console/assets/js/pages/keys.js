// API keys: /ui/keys. Every key (never its secret) with its scope, sources, limits and use;
// a form that creates one and shows its secret once; Revoke, after a confirmation.

import {api, get, post, seg} from '../api.js';
import {h, fill, table, section, badge, confirmButton, errorBox, notice, fmtTime} from '../dom.js';

export async function render(root, ctx) {
  ctx.setTitle('API keys');
  const status = h('div', {class: 'status', id: 'status'});
  const list = h('div', {id: 'keys'});
  const opts = {signal: ctx.signal};
  const reload = () => fill(list, () => get('/admin/keys', opts), d => keyTable(d.keys, status, reload));
  root.append(h('h1', {}, 'API keys'), status,
    section('New key', createForm(status, reload)),
    section('Keys', list),
    h('p', {class: 'muted'}, 'A search key may search and call tools of its sources; an admin key may do everything. ' +
      'The secret is shown once, when the key is created: toolgate keeps only its hash.'));
  await reload();
}

function createForm(status, reload) {
  const name = h('input', {id: 'key-name', name: 'name', required: true, placeholder: 'e.g. support-agent', maxlength: 100});
  const scope = h('select', {id: 'key-scope', name: 'scope'},
    h('option', {value: 'search', selected: true}, 'search'), h('option', {value: 'admin'}, 'admin'));
  const sources = h('input', {id: 'key-sources', name: 'sources', placeholder: 'all (or a,b)'});
  const rate = h('input', {id: 'key-rate', name: 'rate', type: 'number', min: 0, placeholder: 'default'});
  const f = h('form', {id: 'key-form', class: 'grid-form'},
    h('label', {}, 'Name', name), h('label', {}, 'Scope', scope), h('label', {}, 'Sources', sources),
    h('label', {}, 'Searches per minute (0: no limit)', rate),
    h('button', {type: 'submit', id: 'key-create'}, 'Create key'));
  f.addEventListener('submit', async e => {
    e.preventDefault();
    const body = {name: name.value.trim(), scope: scope.value};
    const list = sources.value.split(',').map(x => x.trim()).filter(Boolean);
    if (list.length > 0) {
      body.sources = list;
    }
    if (rate.value.trim() !== '') {
      body.rate_per_min = parseInt(rate.value, 10);
    }
    try {
      const r = await post('/admin/keys', body);
      status.replaceChildren(h('div', {class: 'notice ok new-key'},
        h('p', {}, `Key ${r.api_key.name} created. Copy its secret now: it is not shown again.`),
        h('code', {id: 'new-key'}, r.key)));
      f.reset();
      reload();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  });
  return f;
}

function keyTable(keys, status, reload) {
  const revoke = k => confirmButton('Revoke', `Revoke ${k.name} (${k.prefix})? Its callers are refused at once.`, async () => {
    try {
      await api('DELETE', '/admin/keys/' + seg(k.prefix));
      status.replaceChildren(notice(`Key ${k.name} (${k.prefix}) revoked.`, 'ok'));
      reload();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {class: 'revoke', 'data-key': k.prefix});
  return table([
    {title: 'Name', cell: k => k.name},
    {title: 'Prefix', cell: k => h('code', {}, k.prefix)},
    {title: 'Scope', cell: k => badge(k.scope, k.scope === 'admin' ? 'warn' : '')},
    {title: 'Sources', cell: k => k.sources && k.sources.length ? k.sources.join(', ') : h('span', {class: 'muted'}, 'all')},
    {title: 'Per minute', class: 'num', cell: k => k.rate_per_min ? String(k.rate_per_min) : h('span', {class: 'muted'}, 'no limit')},
    {title: 'Created', cell: k => fmtTime(k.created_at)},
    {title: 'Last used', cell: k => k.last_used_at ? fmtTime(k.last_used_at) : h('span', {class: 'muted'}, 'never')},
    {title: 'State', cell: k => k.revoked_at ? badge('revoked ' + fmtTime(k.revoked_at), 'bad') : badge('active', 'ok')},
    {title: '', cell: k => k.revoked_at ? '' : revoke(k)},
  ], keys, {empty: 'No key yet.', cls: 'keys'});
}
