// Jobs: /ui/jobs?kind=&state=&after=. The queue's jobs counted by kind and state, and a
// list of jobs (by default the failures: retryable and discarded) with their errors and the
// retry and cancel buttons.

import {get, post, query} from '../api.js';
import {h, fill, table, section, badge, confirmButton, errorBox, notice, every, fmtTime, fmtInt, compact} from '../dom.js';

const states = ['available', 'scheduled', 'pending', 'running', 'retryable', 'completed', 'cancelled', 'discarded'];
const failures = 'retryable,discarded';
const PAGE = 50;
// REFRESH is how often the page reads the queue again while jobs wait or run.
const REFRESH = 3000;

const stateKind = st => ({completed: 'ok', running: 'ok', retryable: 'warn', discarded: 'bad', cancelled: ''}[st] ?? '');

export async function render(root, ctx) {
  const p = ctx.url.searchParams;
  const state = p.get('state') || failures;
  const kind = p.get('kind') || '';
  ctx.setTitle('Jobs');
  const status = h('div', {class: 'status', id: 'status'});
  const summary = h('div', {id: 'job-summary'});
  const list = h('div', {id: 'job-list'});
  const title = state === failures && !kind ? 'Failures (retryable and discarded)' : `Jobs${kind ? ' of kind ' + kind : ''} in state ${state.split(',').join(' or ')}`;
  root.append(h('h1', {}, 'Jobs'), status, section('Queue by kind and state', summary),
    section(title, h('p', {class: 'muted'}, state === failures && !kind ? '' : h('a', {href: '/ui/jobs'}, 'Show the failures')), list));
  const opts = {signal: ctx.signal};
  // moving: some job is available or running, so the counts and the list may change.
  let moving = false;
  const reload = (quiet = false) => Promise.all([
    fill(summary, () => get('/admin/jobs/summary', opts), d => {
      moving = d.counts.some(c => (c.state === 'available' || c.state === 'running') && c.count > 0);
      return summaryTable(d.counts);
    }, {quiet}),
    fill(list, () => get('/admin/jobs' + query({state, kind, after: p.get('after'), limit: PAGE}), opts), d => jobTable(d, p, status, reload), {quiet}),
  ]);
  await reload();
  // A confirmation being asked is not swept away by a refresh.
  every(ctx.signal, REFRESH, () => moving && !list.querySelector('.confirmable .question') && reload(true));
}

function summaryTable(counts) {
  const kinds = [...new Set(counts.map(c => c.kind))].sort();
  const n = (k, st) => (counts.find(c => c.kind === k && c.state === st) || {count: 0}).count;
  const cell = (k, st) => {
    const v = n(k, st);
    return v ? h('a', {href: '/ui/jobs' + query({kind: k, state: st})}, fmtInt(v)) : h('span', {class: 'muted'}, '0');
  };
  return table([
    {title: 'Kind', cell: k => k},
    ...states.map(st => ({title: st, class: 'num', cell: k => cell(k, st)})),
  ], kinds, {empty: 'The queue is empty.', cls: 'summary'});
}

// waiting is a state whose job runs again at its scheduled_at.
const waiting = st => st === 'retryable' || st === 'scheduled';

// subject is what a job works on, linked to its page where it has one.
function subject(sj) {
  const href = {source: '/ui/catalog/', tool: '/ui/tool/'}[sj.kind];
  const name = href ? h('a', {href: href + encodeURIComponent(sj.name), class: 'subject'}, sj.name) : h('span', {class: 'subject'}, sj.name);
  return [h('span', {class: 'muted'}, sj.kind + ' '), name];
}

function lastError(j) {
  const errs = j.errors || [];
  if (errs.length === 0) {
    return '';
  }
  const e = errs[errs.length - 1];
  return h('span', {class: 'err-text', title: `attempt ${e.attempt} at ${fmtTime(e.at)}`}, e.error);
}

function jobTable(d, p, status, reload) {
  const act = (j, action) => confirmButton(action === 'retry' ? 'Retry' : 'Cancel',
    `${action === 'retry' ? 'Retry' : 'Cancel'} job ${j.id} (${j.kind}${j.subject ? ' of ' + j.subject.name : ''})?`, async () => {
      try {
        const r = await post(`/admin/jobs/${j.id}/${action}`);
        status.replaceChildren(notice(`Job ${r.id} (${r.kind}) is now ${r.state}.`, 'ok'));
        reload();
      } catch (err) {
        status.replaceChildren(errorBox(err));
      }
    }, {class: action, 'data-job': String(j.id)});
  const finished = st => st === 'completed' || st === 'discarded' || st === 'cancelled';
  return [
    table([
      {title: 'Job', class: 'num', cell: j => String(j.id)},
      {title: 'Kind', cell: j => j.kind},
      {title: 'State', cell: j => badge(j.state, stateKind(j.state))},
      {title: 'Attempt', class: 'num', cell: j => `${j.attempt} / ${j.max_attempts}`},
      {title: 'Created', cell: j => fmtTime(j.created_at)},
      {title: 'Next attempt', cell: j => waiting(j.state) ? h('span', {class: 'next-attempt'}, fmtTime(j.scheduled_at)) : ''},
      {title: 'Last error', cell: lastError},
      {title: 'Of', cell: j => j.subject ? subject(j.subject) : h('code', {title: compact(j.args, 4000)}, compact(j.args, 60))},
      {title: '', cell: j => h('span', {class: 'actions'},
        j.state === 'available' ? null : act(j, 'retry'), ' ',
        finished(j.state) ? null : act(j, 'cancel'))},
    ], d.jobs, {empty: 'No job here.'}),
    h('p', {class: 'pager'},
      p.get('after') ? h('a', {href: '/ui/jobs' + query({state: p.get('state'), kind: p.get('kind')})}, '« First page') : null, ' ',
      d.next ? h('a', {href: '/ui/jobs' + query({state: p.get('state'), kind: p.get('kind'), after: d.next})}, 'Next page »') : null),
  ];
}
