// Hash path -> view. Each view is `async (context) => content` where context has `query` (the
// address's parameters), `args` (the path's captured parts) and `isCurrent()`. A view's module
// (and what only it imports: the markup renderer, the card's actions) loads when the view first
// opens, so the first load carries the page's frame and the view it opens on.
import {h} from './dom.js';

const lazy = (path) => (context) => import(path).then((module) => module.default(context));
const board = lazy('./views/board.js');
const batch = lazy('./views/batch.js');
const batches = lazy('./views/batches.js');
const changes = lazy('./views/changes.js');
const command = lazy('./views/command.js');
const issue = lazy('./views/issue.js');
const issues = lazy('./views/issues.js');
const newBatch = lazy('./views/new-batch.js');
const overview = lazy('./views/overview.js');
const projects = lazy('./views/projects.js');

const ROUTES = [
  ['overview', /^\/$/, overview],
  ['projects', /^\/projects$/, projects],
  ['issues', /^\/issues$/, issues],
  ['issue', /^\/issues\/([^/]+)$/, issue],
  ['board', /^\/board\/([^/]+)$/, board],
  ['batches', /^\/batches$/, batches],
  ['batch', /^\/batches\/([^/]+)$/, batch],
  ['command', /^\/commands\/([^/]+)$/, command],
  ['new-batch', /^\/new-batch$/, newBatch],
  ['changes', /^\/changes$/, changes],
  ['reports', /^\/reports\/([^/]+)$/, (context) => import('./views/reports.js').then((module) => module.default(context))],
];

async function notFound() {
  return [h('h1', {}, 'Нет такой страницы'),
    h('p', {}, 'Адрес не ведёт ни к одному разделу. ', h('a', {href: '#/'}, 'На обзор'))];
}

function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export function routeOf(path) {
  const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
  for (const [name, pattern, view] of ROUTES) {
    const match = pattern.exec(clean);
    if (match) return {name, view, args: match.slice(1).map(decode)};
  }
  return {name: 'not-found', view: notFound, args: []};
}
