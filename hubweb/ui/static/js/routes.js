// Hash path -> view. Each view is `async (context) => content` where context has `query` (the
// address's parameters), `args` (the path's captured parts) and `isCurrent()`. A view's module
// (and what only it imports: the markup renderer, the card's actions) loads when the view first
// opens, so the first load carries the page's frame and the view it opens on.
import {Unreachable, hubAnswers} from './api.js';
import {h} from './dom.js';

/** A view's module that did not arrive although the hub answers: the page offers a reload. */
export class ModuleMissing extends Error {
  constructor(path, cause) {
    super(`не загрузилась часть страницы (${path.replace(/^\.\//, '')}): ${cause.message}`);
    this.cause = cause;
  }
}

/**
 * A view's module. When it does not arrive (the browser's «Failed to fetch dynamically imported
 * module», a TypeError) and the hub does not answer either, that is «хаб недоступен» like an API
 * call without an answer: the page offers «Повторить», and the next import fetches the module
 * again. When the hub answers, the module itself is missing, or the browser keeps the failed
 * import (the HTML standard once said so): only a reload helps (ModuleMissing).
 */
async function load(path) {
  try {
    return await import(path);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;  // a SyntaxError: a bug of the page
    if (!(await hubAnswers())) throw new Unreachable();
    throw new ModuleMissing(path, error);
  }
}

const lazy = (path) => (context) => load(path).then((module) => module.default(context));
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
  ['reports', /^\/reports\/([^/]+)$/, lazy('./views/reports.js')],
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
