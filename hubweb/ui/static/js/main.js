// Boot, hash routing and sign-in. Addresses follow contract §15: #/, #/projects,
// #/issues?project=&status=…, #/issues/<key>, #/board/<label>, #/batches?status=,
// #/batches/<id>, #/new-batch, #/changes.
import {ApiError, SignedOut, setSignedOutHandler, signOut, token, tryToken} from './api.js';
import {field, fill, h, message} from './dom.js';
import {refreshTimes} from './format.js';
import {installGoto} from './goto.js';
import {forgetPeople} from './people.js';
import {ModuleMissing, routeOf} from './routes.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const gotoForm = document.getElementById('goto');
const signOutButton = document.getElementById('sign-out');
let renderSeq = 0;
let signInNotice = null;

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const mark = raw.indexOf('?');
  const path = mark < 0 ? raw : raw.slice(0, mark);
  const search = mark < 0 ? '' : raw.slice(mark + 1);
  return {path: path || '/', query: Object.fromEntries(new URLSearchParams(search))};
}

function markNav(path) {
  const section = `#/${path.split('/')[1] || ''}`;
  for (const link of nav.querySelectorAll('a')) {
    const target = link.getAttribute('href');
    const current = target === '#/' ? section === '#/' : section === target
      || (target === '#/projects' && (section === '#/board' || section === '#/reports'))
      || (target === '#/batches' && section === '#/commands');
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function settle(view, title) {
  main.dataset.view = view;
  main.dataset.state = 'ready';
  main.dataset.render = String(renderSeq);  // lets a test tell this render from the previous one
  main.removeAttribute('aria-busy');
  const heading = main.querySelector('h1');
  document.title = `${title || (heading && heading.textContent) || 'sdlc-hub'} — sdlc-hub`;
  if (heading) {
    heading.setAttribute('tabindex', '-1');
    heading.focus({preventScroll: true});
  }
}

function errorView(error) {
  if (error instanceof ApiError && error.status === 404) {
    return [h('h1', {}, 'Не найдено'), message(error.message)];
  }
  if (error instanceof ApiError && error.status === 0) {
    return [h('h1', {}, 'Хаб недоступен'), message(error.message),
      h('p', {}, h('button', {type: 'button', onclick: () => render()}, 'Повторить'))];
  }
  if (error instanceof ModuleMissing) {
    return [h('h1', {}, 'Ошибка страницы'), message(`Ошибка страницы: ${error.message}`),
      h('p', {}, h('button', {type: 'button', onclick: () => location.reload()}, 'Обновить страницу'))];
  }
  const text = error instanceof ApiError ? `${error.body.title || 'Ошибка'}: ${error.message}`
    : `Ошибка страницы: ${error.message}`;
  return [h('h1', {}, 'Ошибка'), message(text)];
}

async function render() {
  const seq = ++renderSeq;
  if (!token()) {
    showSignIn();
    return;
  }
  nav.hidden = false;
  gotoForm.hidden = false;
  signOutButton.hidden = false;
  const {path, query} = parseHash();
  markNav(path);
  const {name, view, args} = routeOf(path);
  main.dataset.state = 'loading';
  main.setAttribute('aria-busy', 'true');
  window.scrollTo(0, 0);
  const container = h('div', {class: `view view-${name}`}, h('p', {class: 'loading'}, 'Загрузка…'));
  main.replaceChildren(container);
  const context = {query, args, isCurrent: () => seq === renderSeq};
  try {
    const content = await view(context);
    if (seq !== renderSeq) return;
    fill(container, content);
    settle(name);
  } catch (error) {
    if (error instanceof SignedOut || seq !== renderSeq) return;
    if (!(error instanceof ApiError)) console.warn(error);  // a bug of the page, not of the hub
    fill(container, errorView(error));
    settle('error');
  }
}

function showSignIn() {
  renderSeq += 1;
  nav.hidden = true;
  gotoForm.hidden = true;
  signOutButton.hidden = true;
  const tokenField = field('Токен клиента', 'token', {
    type: 'password', required: true, attrs: {autocomplete: 'off', spellcheck: 'false'},
    hint: 'Выводит команда sdlc-hub tokens --data <каталог> (значение client).'});
  const button = h('button', {type: 'submit'}, 'Войти');
  const form = h('form', {class: 'sign-in', novalidate: true}, tokenField.wrap, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const candidate = tokenField.input.value.trim();
    if (!candidate) {
      tokenField.setError('введите токен');
      tokenField.input.focus();
      return;
    }
    button.disabled = true;
    try {
      await tryToken(candidate);
      signInNotice = null;
      render();
    } catch (error) {
      const text = !(error instanceof ApiError) ? `ошибка страницы: ${error.message}`
        : error.status === 0 ? error.message
        : error.status === 401 ? 'неверный токен'
        : error.status === 403 ? 'это токен агента; нужен токен клиента'
        : error.message;
      tokenField.setError(text);
      tokenField.input.focus();
    } finally {
      button.disabled = false;
    }
  });
  main.replaceChildren(h('div', {class: 'view view-sign-in'},
    h('h1', {}, 'Вход'),
    signInNotice ? message(signInNotice, 'info') : null,
    h('p', {}, 'Страница работает с API хаба от вашего имени. Токен хранится только в этой вкладке '
      + 'браузера и пропадает, когда вкладка закрыта.'),
    form));
  settle('sign-in', 'Вход');
  tokenField.input.focus();
}

setSignedOutHandler((reason) => {
  forgetPeople();
  signInNotice = reason;
  showSignIn();
});
signOutButton.addEventListener('click', () => signOut('Вы вышли.'));
installGoto(gotoForm);
window.addEventListener('hashchange', render);
setInterval(() => refreshTimes(main), 60_000);  // «2 минуты назад» stays true while the page is open
render();
