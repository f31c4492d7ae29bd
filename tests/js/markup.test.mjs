// The Jira wiki markup renderer (hubweb/ui/static/js/markup.js) over a tiny DOM: what each markup
// becomes, and that hostile input stays text in bounded time. Run: node --test tests/js/
import assert from 'node:assert/strict';
import {test} from 'node:test';

import './dom-shim.mjs';
import {MARKUP_LIMIT, markupInSteps, renderMarkup} from '../../hubweb/ui/static/js/markup.js';

const shape = (text, options) => renderMarkup(text, options).shape;
const inner = (text) => shape(text).replace(/^div\(p\((.*)\)\)$/, '$1');

test('headings h1.–h6. become headings two levels down with their level as a class', () => {
  assert.equal(shape('h1. Заголовок'), 'div(h3("Заголовок"))');
  assert.equal(renderMarkup('h2. Описание').all('h4')[0].getAttribute('class'), 'markup-h2');
  assert.equal(shape('h6. мелко'), 'div(h6("мелко"))');
  assert.equal(shape('h7. не заголовок'), 'div(p("h7. не заголовок"))');
});

test('bold, italic, strike, underline and mono', () => {
  assert.equal(inner('*жирно* и _курсив_'), 'strong("жирно") " и " em("курсив")');
  assert.equal(inner('-зачёркнуто- +подчёркнуто+'), 's("зачёркнуто") " " u("подчёркнуто")');
  assert.equal(inner('{{моно *не жирно*}}'), 'code("моно *не жирно*")');
  assert.equal(inner('*жирный _и курсив_*'), 'strong("жирный " em("и курсив"))');
});

test('delimiters inside words and dates are text', () => {
  assert.equal(inner('2026-12-01 a-b-c snake_case_name 2*3*4'), '"2026-12-01 a-b-c snake_case_name 2*3*4"');
  assert.equal(inner('a * b * c'), '"a * b * c"');
  assert.equal(inner('window.__pwned=5 and window.__pwned=6'), '"window.__pwned=5 and window.__pwned=6"');
  assert.equal(inner('_курсив_, а не __init__'), 'em("курсив") ", а не __init__"');
  assert.equal(inner('*незакрыто'), '"*незакрыто"');
  assert.equal(inner('**'), '"**"');
});

test('an escaped delimiter is shown as itself', () => {
  assert.equal(inner('\\*не жирно\\*'), '"*не жирно*"');
});

test('code blocks keep their text literally, with the language when given', () => {
  const code = renderMarkup('до\n{code:python}\nx = "<b>*не жирно*</b>"\n{code}\nпосле');
  assert.equal(code.shape, 'div(p("до") pre(code("x = \\"<b>*не жирно*</b>\\"")) p("после"))');
  assert.equal(code.all('pre')[0].getAttribute('data-lang'), 'python');
  assert.equal(shape('{code}x{code}'), 'div(pre(code("x")))');
  assert.equal(shape('{code:title=a.py|borderStyle=solid}\ny\n{code}'), 'div(pre(code("y")))');
  assert.equal(shape('{noformat}\n*a* {code}\n{noformat}'), 'div(pre(code("*a* {code}")))');
});

test('an unclosed code or quote tag is shown as typed', () => {
  assert.equal(shape('{code}\n*a*'), 'div(p("{code}" br() strong("a")))');
  assert.equal(shape('{quote}текст'), 'div(p("{quote}") p("текст"))');
});

test('quotes hold blocks', () => {
  assert.equal(shape('{quote}\nh3. Цитата\nтекст\n{quote}'), 'div(blockquote(h5("Цитата") p("текст")))');
  assert.equal(shape('bq. коротко'), 'div(blockquote(p("коротко")))');
});

test('lists nest and mix bullets and numbers', () => {
  assert.equal(shape('* один\n* два\n** вложенный\n*# номер\n* три'),
    'div(ul(li("один") li("два" ul(li("вложенный")) ol(li("номер"))) li("три")))');
  assert.equal(shape('# первый\n# второй'), 'div(ol(li("первый") li("второй")))');
});

test('tables with header and data rows; a bar inside a link does not split a cell', () => {
  const table = renderMarkup('||Поле||Значение||\n|статус|*В работе*|\n|ссылка|[сайт|https://example.org]|');
  assert.equal(table.shape, 'div(div(table(tbody(tr(th("Поле") th("Значение")) '
    + 'tr(td("статус") td(strong("В работе"))) tr(td("ссылка") td(a("сайт")))))))');
  assert.equal(table.all('a')[0].getAttribute('href'), 'https://example.org');
});

test('links: http(s) and mailto only; issue keys open the card; users by name', () => {
  const links = renderMarkup('[Документация|https://example.org/a?b=1] [mailto:a@b.ru] [AURORA-7] '
    + 'https://example.org/x. [~ivanov]', {person: (login) => (login === 'ivanov' ? 'Иван Иванов' : login)});
  const anchors = links.all('a');
  assert.deepEqual(anchors.map((a) => [a.textContent, a.getAttribute('href')]), [
    ['Документация', 'https://example.org/a?b=1'], ['mailto:a@b.ru', 'mailto:a@b.ru'],
    ['AURORA-7', '#/issues/AURORA-7'], ['https://example.org/x', 'https://example.org/x']]);
  assert.equal(anchors[0].getAttribute('rel'), 'noopener noreferrer nofollow');
  assert.equal(links.all('span')[0].textContent, 'Иван Иванов');
  assert.equal(links.all('span')[0].getAttribute('title'), 'ivanov');
});

test('hostile input stays text: script, javascript: links, data: links, images, HTML', () => {
  const hostile = renderMarkup('<script>alert(1)</script>\n[клик|javascript:alert(1)] [x|data:text/html,1] '
    + '[JavaScript:alert(2)] !https://evil.example/x.png! <img src=x onerror=alert(3)>');
  // the image markup is not an image (no request): its address is a plain link
  assert.deepEqual(hostile.all().map((node) => node.tagName), ['P', 'BR', 'A']);
  assert.equal(hostile.all('a')[0].getAttribute('href'), 'https://evil.example/x.png');
  assert.match(hostile.textContent, /^<script>alert\(1\)<\/script>\[клик\|javascript:alert\(1\)\] /);
  assert.ok(hostile.textContent.includes('<img src=x onerror=alert(3)>'));
});

test('unbalanced markup is text', () => {
  assert.equal(inner('*a _b* c_ [нет ссылки {{моно'), 'strong("a _b") " c_ [нет ссылки {{моно"');
  assert.equal(shape('||не закрыта'), 'div(div(table(tbody(tr(th("не закрыта"))))))');
});

function timed(text, options) {
  const started = performance.now();
  const rendered = renderMarkup(text, options);
  return [rendered, performance.now() - started];
}

test('1 MB of asterisks renders as text in bounded time, by the parser itself', () => {
  // limit: Infinity — the parser, not the size guard below, keeps these linear
  for (const hostile of ['*'.repeat(1 << 20), '*a'.repeat(1 << 19), '['.repeat(1 << 20),
    '{{'.repeat(1 << 19), '[~'.repeat(1 << 19), '* '.repeat(1 << 19)]) {
    const [rendered, elapsed] = timed(hostile, {limit: Infinity});
    assert.ok(elapsed < 2000, `${hostile.slice(0, 8)}…: ${elapsed.toFixed(0)} ms`);
    assert.ok(rendered.all().length <= 2, hostile.slice(0, 8));  // a paragraph (or a list item)
    const shown = rendered.textContent;  // every character, bar the list marker
    assert.ok(shown === hostile || `* ${shown}` === hostile, hostile.slice(0, 8));
  }
});

test('a text past MARKUP_LIMIT is shown as plain text', () => {
  const huge = 'h1. x\n*жирно* '.repeat(MARKUP_LIMIT / 8);
  const [rendered, elapsed] = timed(huge);
  assert.ok(elapsed < 2000, `${elapsed.toFixed(0)} ms`);
  assert.equal(rendered.shape.slice(0, 20), 'div("h1. x\\n*жирно* ');
  assert.equal(rendered.getAttribute('class'), 'markup plain');
  assert.equal(rendered.textContent, huge);
});

test('the shapes that make the most nodes stay bounded at the limit', () => {
  // up to one element per two characters; bounded far above what a real description needs
  for (const unit of ['*_-+', '||', 'a\n', '*a* ', '{code:x}', '{quote}', 'http://']) {
    const hostile = unit.repeat(Math.floor(MARKUP_LIMIT / unit.length));
    const [, elapsed] = timed(hostile);
    assert.ok(elapsed < 5000, `${unit}: ${elapsed.toFixed(0)} ms`);
  }
});

test('empty and missing text render nothing', () => {
  assert.equal(shape(''), 'div()');
  assert.equal(shape(null), 'div()');
});

// --- rendered in steps (the card's big descriptions and comments) -----------------------------

const SAMPLES = [
  'h2. Заголовок\n*жирно* и _курсив_\n\n* один\n** два\n# три\n\nконец',
  'до\n{code:python}\nx = 1\n{code}\nпосле\n{quote}\nв цитате\n||a||b||\n|1|2|\n{quote}\nхвост',
  '{quote}текст без конца\nи ещё', '{code}не закрыт\n*и не жирный*', '{quote}{quote}пусто',
  '||h1||h2||\n' + Array.from({length: 300}, (_, n) => `|${n}|[ссылка|https://x.example/${n}]|`).join('\n'),
  'строка\n'.repeat(500) + '{noformat}\nсырой\n{noformat}\n' + '- пункт\n'.repeat(200),
];

test('a render in steps ends with the same nodes as a render at once', () => {
  for (const text of SAMPLES) {
    for (const budget of [0, 1, 40, 1000]) {
      const steps = markupInSteps(text, {budget});
      let calls = 0;
      while (!steps.advance(() => (calls += 1) % 7 === 0));  // a few lines at a time
      assert.equal(steps.element.shape, renderMarkup(text).shape, `${text.slice(0, 20)}… budget ${budget}`);
      assert.equal(steps.rendered, text.length);
    }
  }
  const huge = 'x'.repeat(MARKUP_LIMIT + 10);
  const plain = markupInSteps(huge, {budget: 20_000});
  assert.ok(!plain.done && plain.element.textContent.length < 40_000);
  plain.advance(() => false);
  assert.equal(plain.element.textContent, huge);
  assert.equal(plain.element.getAttribute('class'), 'markup plain');
});

function nodes(element) {
  let count = 0;
  const walk = (node) => {
    count += 1;
    for (const child of node.childNodes) walk(child);
  };
  walk(element);
  return count;
}

test('a 130 KB wiki table renders its first budget of lines at once, the rest on request', () => {
  const rows = ['||' + Array.from({length: 8}, (_, c) => `Колонка ${c}`).join('||') + '||'];
  while (rows.join('\n').length < 130 * 1024) rows.push(`|${Array.from({length: 8}, (_, c) => `${rows.length}.${c}`).join('|')}|`);
  const table = rows.join('\n');
  const whole = nodes(renderMarkup(table));
  const steps = markupInSteps(table, {budget: 16_000});
  assert.ok(!steps.done);
  assert.ok(steps.rendered >= 16_000 && steps.rendered < 16_000 + 200, String(steps.rendered));
  const first = nodes(steps.element);
  assert.ok(first < whole / 6, `${first} of ${whole} nodes`);
  assert.equal(steps.element.all('tr').length, table.slice(0, steps.rendered).trimEnd().split('\n').length);
  assert.ok(steps.advance(() => false));
  assert.equal(nodes(steps.element), whole);
  // a text within the budget renders whole at once
  assert.ok(markupInSteps('короткий *текст*', {budget: 16_000}).done);
});
