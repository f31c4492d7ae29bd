// Hash path -> view. Each view is `async (context) => content` where context has `query` (the
// address's parameters), `args` (the path's captured parts) and `isCurrent()`.
import {h} from './dom.js';
import board from './views/board.js';
import batch from './views/batch.js';
import batches from './views/batches.js';
import changes from './views/changes.js';
import command from './views/command.js';
import issue from './views/issue.js';
import issues from './views/issues.js';
import newBatch from './views/new-batch.js';
import overview from './views/overview.js';
import projects from './views/projects.js';

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
