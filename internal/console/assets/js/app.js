// The console's shell: the key field, the navigation, and the router that renders the
// page the location names. Every page is a deep link; moving between pages pushes a new
// history entry and renders without reloading.

import {get, getKey, setKey} from './api.js';
import {h, clear, errorBox} from './dom.js';
import * as search from './pages/search.js';
import * as catalog from './pages/catalog.js';
import * as tool from './pages/tool.js';
import * as analytics from './pages/analytics.js';
import * as profiles from './pages/profiles.js';
import * as experiments from './pages/experiments.js';
import * as jobs from './pages/jobs.js';
import * as keys from './pages/keys.js';
import * as searches from './pages/searches.js';
import * as rules from './pages/rules.js';

// routes: the path's pattern, the navigation item it belongs to, whether it needs an admin
// key, and its renderer (given the path's decoded groups).
const routes = [
  {re: /^\/ui\/search$/, nav: 'search', admin: false, render: search.render},
  {re: /^\/ui\/catalog$/, nav: 'catalog', admin: true, render: catalog.renderSources},
  {re: /^\/ui\/catalog\/([^/]+)$/, nav: 'catalog', admin: true, render: catalog.renderSource},
  {re: /^\/ui\/tool\/([^/]+)$/, nav: 'catalog', admin: true, render: tool.render},
  {re: /^\/ui\/analytics$/, nav: 'analytics', admin: true, render: analytics.render},
  {re: /^\/ui\/searches$/, nav: 'analytics', admin: true, render: searches.render},
  {re: /^\/ui\/searches\/(\d+)$/, nav: 'analytics', admin: true, render: searches.render},
  {re: /^\/ui\/profiles$/, nav: 'profiles', admin: true, render: profiles.render},
  {re: /^\/ui\/experiments$/, nav: 'experiments', admin: true, render: experiments.render},
  {re: /^\/ui\/experiments\/([^/]+)$/, nav: 'experiments', admin: true, render: experiments.render},
  {re: /^\/ui\/jobs$/, nav: 'jobs', admin: true, render: jobs.render},
  {re: /^\/ui\/keys$/, nav: 'keys', admin: true, render: keys.render},
  {re: /^\/ui\/rules$/, nav: 'rules', admin: true, render: rules.render},
];

const navItems = [
  {id: 'search', title: 'Search', href: '/ui/search', admin: false},
  {id: 'catalog', title: 'Catalog', href: '/ui/catalog', admin: true},
  {id: 'analytics', title: 'Analytics', href: '/ui/analytics', admin: true},
  {id: 'profiles', title: 'Profiles', href: '/ui/profiles', admin: true},
  {id: 'experiments', title: 'Experiments', href: '/ui/experiments', admin: true},
  {id: 'jobs', title: 'Jobs', href: '/ui/jobs', admin: true},
  {id: 'keys', title: 'Keys', href: '/ui/keys', admin: true},
  {id: 'rules', title: 'Rules', href: '/ui/rules', admin: true},
];

// who is the caller (GET /v1/whoami), or the error that call failed with; current aborts
// the calls of the page being left.
let who = null;
let whoErr = null;
let current = null;

function isAdmin(w) {
  return w && (w.kind === 'admin' || w.kind === 'open');
}

async function identify() {
  who = null;
  whoErr = null;
  try {
    who = await get('/v1/whoami');
  } catch (err) {
    whoErr = err;
  }
}

function renderHeader(active) {
  const nav = document.getElementById('nav');
  clear(nav);
  for (const item of navItems) {
    if (!who || (item.admin && !isAdmin(who))) {
      continue;
    }
    nav.append(h('a', {href: item.href, 'aria-current': item.id === active ? 'page' : null}, item.title));
  }
  const whoNode = document.getElementById('who');
  if (who) {
    whoNode.textContent = who.kind === 'open' ? 'open mode (no key needed)' : `${who.name} · ${who.kind} key`;
  } else {
    whoNode.textContent = getKey() ? 'key refused' : 'no key';
  }
  document.getElementById('forget').hidden = !getKey();
}

export function navigate(href) {
  history.pushState(null, '', href);
  render();
}

async function render() {
  if (current) {
    current.abort();
  }
  const ctl = new AbortController();
  current = ctl;
  const url = new URL(location.href);
  if (url.pathname === '/ui/' || url.pathname === '/ui') {
    history.replaceState(null, '', '/ui/search' + url.search);
    url.pathname = '/ui/search';
  }
  const main = document.getElementById('main');
  const route = routes.find(r => r.re.test(url.pathname));
  renderHeader(route ? route.nav : '');
  clear(main);
  const setTitle = t => {
    document.title = `${t} · toolgate`;
  };
  if (!who) {
    setTitle('Key needed');
    main.append(h('h1', {}, 'toolgate console'),
      h('p', {}, 'Paste an API key in the field above (an admin key for every page, a search key for the search playground). ' +
        'It stays in this tab only (sessionStorage) and is sent as Authorization: Bearer to this server.'),
      errorBox(whoErr));
    return;
  }
  if (!route) {
    setTitle('Not found');
    main.append(h('h1', {}, 'No such page'), h('p', {}, h('a', {href: '/ui/search'}, 'Go to the search playground')));
    return;
  }
  if (route.admin && !isAdmin(who)) {
    setTitle('Admin key needed');
    main.append(h('h1', {}, 'Admin key needed'),
      h('p', {class: 'needs-admin'}, `This page needs an admin key; the key “${who.name}” is a ${who.kind} key, which may use the search playground only.`),
      h('p', {}, h('a', {href: '/ui/search'}, 'Go to the search playground')));
    return;
  }
  const groups = url.pathname.match(route.re).slice(1).map(decodeURIComponent);
  const ctx = {url, groups, who, signal: ctl.signal, setTitle, navigate, refresh: render, admin: isAdmin(who)};
  try {
    await route.render(main, ctx);
  } catch (err) {
    if (err.name !== 'AbortError' && current === ctl) {
      main.append(errorBox(err));
    }
  }
}

function onLinkClick(e) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) {
    return;
  }
  const a = e.target.closest('a[href]');
  if (!a || a.target || a.hasAttribute('download')) {
    return;
  }
  const u = new URL(a.href, location.href);
  if (u.origin !== location.origin || !u.pathname.startsWith('/ui/')) {
    return;
  }
  e.preventDefault();
  navigate(u.pathname + u.search + u.hash);
}

async function onKey(e) {
  e.preventDefault();
  const input = document.getElementById('key');
  setKey(input.value.trim());
  input.value = '';
  await identify();
  render();
}

async function onForget() {
  setKey('');
  await identify();
  render();
}

async function start() {
  document.addEventListener('click', onLinkClick);
  window.addEventListener('popstate', render);
  document.getElementById('keyform').addEventListener('submit', onKey);
  document.getElementById('forget').addEventListener('click', onForget);
  await identify();
  render();
}

start();
