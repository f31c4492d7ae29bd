// Jira wiki markup -> DOM nodes (contract §15a). Text from Jira never becomes an HTML string: every
// piece is a createElement or a text node, so `<script>` is shown as the characters it is.
//
// Supported: h1.–h6. (drawn two levels down: the page's own h1/h2 stay the page's), *bold*,
// _italic_, -strike-, +under+, {{mono}}, {code[:lang]}…{code}, {noformat}…{noformat},
// {quote}…{quote} and bq., lists * and # (nested, mixed), tables ||h|| and |c|, ----, links
// [text|url] and [url] (only http, https and mailto become links; [KEY-1] opens the issue),
// bare http(s) addresses, [~user] and \ escapes. Anything else — an unclosed {code}, a
// javascript: link, !image! — stays text.
//
// Bounded time: blocks are one pass over the lines; inline effects are found through sorted
// lists of the positions that may close each effect (binary search), and an effect never spans
// a line or holds an effect of its own kind, so every character is visited a fixed number of
// times (1 MB of `*` renders as one text node in well under a second).

const INLINE = {'*': 'strong', _: 'em', '-': 's', '+': 'u'};
const SAFE_LINK = /^(?:https?:\/\/|mailto:)[^\s<>"]+$/i;
const BARE_URL = /https?:\/\/[^\s<>"[\]|]+/y;
const ISSUE_KEY = /^[A-Z][A-Z0-9_]*-\d+$/;
const BLOCK_TAG = /\{(code|noformat|quote)(?::([^}\n]*))?\}/g;
const HEADING = /^h([1-6])\.\s+(.*)$/;
const LIST_ITEM = /^([*#]+)\s+(.*)$/;
const RULE = /^-{4,}\s*$/;
const QUOTE_LINE = /^bq\.\s+(.*)$/;
const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/;
const MARK = new Uint8Array(128);  // the characters that may start markup inside a line
for (const ch of '\\*_-+{[h') MARK[ch.charCodeAt(0)] = 1;
const MAY_MARK = /[\\*_\-+{[h]/;
// Longer texts are shown as plain text: Jira's own limit for a text field is 32,767 characters,
// and past this size the page would spend seconds building nodes for a text nobody reads.
export const MARKUP_LIMIT = 200_000;
const PLAIN_STEP = 16_384;  // characters of a plain (over the limit) text appended at a time

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  for (const child of children || []) {
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** The first value of the sorted `list` that is >= `from`, or Infinity. */
function firstFrom(list, from) {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (list[middle] < from) low = middle + 1;
    else high = middle;
  }
  return low < list.length ? list[low] : Infinity;
}

/** A letter, digit or `_` (so `window.__name` or `snake_case` holds no italic). */
function isWord(ch) {
  if (ch === undefined) return false;
  const code = ch.charCodeAt(0);
  if (code < 128) {
    return (code >= 48 && code <= 57) || ((code | 32) >= 97 && (code | 32) <= 122) || code === 95;
  }
  return WORD.test(ch);
}

function isSpace(ch) {
  if (ch === undefined) return true;
  const code = ch.charCodeAt(0);
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return SPACE.test(ch);
}

/** Inline markup of one line as an array of nodes and strings. */
function inline(line, options) {
  if (!MAY_MARK.test(line)) return line ? [line] : [];
  const n = line.length;
  const escaped = new Uint8Array(n);
  for (let i = 0; i < n; i += 1) {
    if (line.charCodeAt(i) === 92 && !escaped[i] && i + 1 < n) escaped[i + 1] = 1;  // backslash
  }
  // Where each effect may close: a delimiter after a non-space that is not the delimiter itself,
  // before a non-word character (so `a-b-c` and `2026-12-01` strike nothing).
  const closers = {'*': [], _: [], '-': [], '+': [], ']': [], '}}': []};
  for (let i = 0; i < n; i += 1) {
    const code = line.charCodeAt(i);
    if (escaped[i] || (code !== 93 && code !== 125 && !(code < 128 && MARK[code]))) continue;
    const ch = line[i];
    if (INLINE[ch] && i > 0 && line.charCodeAt(i - 1) !== code && !isSpace(line[i - 1])
        && !isWord(line[i + 1])) {
      closers[ch].push(i);
    } else if (ch === ']') {
      closers[']'].push(i);
    } else if (ch === '}' && line[i + 1] === '}') {
      closers['}}'].push(i);
    }
  }

  function run(start, end, inside) {
    const out = [];
    let from = start;  // the plain text not yet emitted is line[from, i)
    let text = '';  // plain text already cut out before `from` (escapes drop their backslash)
    const flush = (i) => {
      text += line.slice(from, i);
      if (text) out.push(text);
      text = '';
    };
    let i = start;
    while (i < end) {
      const code = line.charCodeAt(i);
      // plain characters (anything but \\ * _ - + { [ h) cost one comparison each
      if (escaped[i] || !MARK[code]) {
        i += 1;
        continue;
      }
      const ch = line[i];
      if (ch === '\\' && i + 1 < end) {
        text += line.slice(from, i);  // drop the backslash; the next character is itself
        from = i + 1;
        i += 2;
        continue;
      }
      // *bold* _italic_ -strike- +under+: an opener at a word's start, before a non-space
      if (INLINE[ch] && line.charCodeAt(i + 1) !== code && !inside.has(ch) && !isWord(line[i - 1])
          && !isSpace(line[i + 1])) {
        const close = firstFrom(closers[ch], i + 2);
        if (close < end) {
          flush(i);
          out.push(el(INLINE[ch], {}, run(i + 1, close, new Set(inside).add(ch))));
          i = close + 1;
          from = i;
          continue;
        }
      } else if (ch === '{' && line[i + 1] === '{') {
        const close = firstFrom(closers['}}'], i + 2);
        if (close < end && close > i + 2) {
          flush(i);
          out.push(el('code', {class: 'mono'}, [line.slice(i + 2, close)]));
          i = close + 2;
          from = i;
          continue;
        }
      } else if (ch === '[') {
        const close = firstFrom(closers[']'], i + 1);
        const node = close < end ? link(line.slice(i + 1, close), options) : null;
        if (node) {
          flush(i);
          out.push(node);
          i = close + 1;
          from = i;
          continue;
        }
      } else if (ch === 'h' && !isWord(line[i - 1])) {
        BARE_URL.lastIndex = i;
        const found = BARE_URL.exec(line);
        if (found && i + found[0].length <= end) {
          const url = found[0].replace(/[.,;:!?)]+$/, '');  // sentence punctuation stays text
          flush(i);
          out.push(el('a', {href: url, rel: 'noopener noreferrer nofollow', target: '_blank'}, [url]));
          i += url.length;
          from = i;
          continue;
        }
      }
      i += 1;
    }
    flush(end);
    return out;
  }

  return run(0, n, new Set());
}

/** `[text|url]`, `[url]`, `[~user]`, `[KEY-1]` as a node; null leaves the brackets as text. */
function link(inner, options) {
  if (inner.startsWith('~') && inner.length > 1) {
    const login = inner.slice(1);
    return el('span', {class: 'user', title: login}, [options.person ? options.person(login) : login]);
  }
  const bar = inner.lastIndexOf('|');
  const label = bar < 0 ? inner : inner.slice(0, bar);
  const target = (bar < 0 ? inner : inner.slice(bar + 1)).trim();
  if (ISSUE_KEY.test(target)) {
    return el('a', {href: `#/issues/${encodeURIComponent(target)}`, class: 'key'}, [label || target]);
  }
  if (!SAFE_LINK.test(target)) return null;
  return el('a', {href: target, rel: 'noopener noreferrer nofollow', target: '_blank'}, [label || target]);
}

/** Lines of a paragraph with line breaks between them. */
function paragraph(lines, options) {
  const children = [];
  lines.forEach((line, index) => {
    if (index) children.push(el('br'));
    for (const node of inline(line, options)) children.push(node);
  });
  return el('p', {}, children);
}

/** Table cells of a `|a|b|` or `||h||h||` line, not splitting inside [links] or {{mono}}. */
function cells(line) {
  const found = [];
  let i = 0;
  let current = null;
  let depth = 0;
  while (i < line.length) {
    const ch = line[i];
    if (ch === '\\' && i + 1 < line.length) {
      if (current) current.text += ch + line[i + 1];
      i += 2;
      continue;
    }
    if (ch === '[') depth += 1;
    else if (ch === ']' && depth > 0) depth -= 1;
    if (ch === '{' && line[i + 1] === '{') depth += 1;
    if (ch === '}' && line[i + 1] === '}' && depth > 0) depth -= 1;
    if (ch === '|' && depth === 0) {
      const header = line[i + 1] === '|';
      if (current) found.push(current);
      current = {header, text: ''};
      i += header ? 2 : 1;
      continue;
    }
    if (current) current.text += ch;
    i += 1;
  }
  if (current && current.text.trim()) found.push(current);
  return found;
}

/**
 * Block markup of lines outside {code}/{noformat}/{quote}, appended to `parent` as it goes (a
 * table or a list is appended at its first line, its rows or items after); yields, after each
 * line, the source offset reached (`base` is where `text` starts in the source).
 */
function* blocks(text, options, parent, base = 0) {
  const out = {push: (node) => parent.append(node)};
  const lines = text.split(/\r?\n/);
  let offset = base;
  let para = [];
  let lists = [];  // [{marker, element, item}] from the outermost list
  let tableBody = null;
  const endParagraph = () => {
    if (para.length) out.push(paragraph(para, options));
    para = [];
  };
  const endList = () => {
    lists = [];
  };
  const endTable = () => {
    tableBody = null;
  };
  for (const line of lines) {
    if (offset > base) yield offset;  // the lines before this one are on the page
    offset += line.length + 1;
    const item = LIST_ITEM.exec(line);
    if (item) {
      endParagraph();
      endTable();
      const markers = item[1];
      let depth = 0;
      while (depth < lists.length && depth < markers.length
             && lists[depth].marker === markers[depth]) depth += 1;
      lists.length = depth;
      for (let level = depth; level < markers.length; level += 1) {
        const element = el(markers[level] === '#' ? 'ol' : 'ul');
        const parent = lists[level - 1];
        if (parent) {
          if (!parent.item) {
            parent.item = el('li');
            parent.element.append(parent.item);
          }
          parent.item.append(element);
        } else {
          out.push(element);
        }
        lists.push({marker: markers[level], element, item: null});
      }
      const last = lists[lists.length - 1];
      last.item = el('li', {}, inline(item[2], options));
      last.element.append(last.item);
      continue;
    }
    endList();
    if (line.startsWith('|')) {
      endParagraph();
      if (!tableBody) {
        tableBody = el('tbody');
        out.push(el('div', {class: 'markup-table'}, [el('table', {}, [tableBody])]));
      }
      tableBody.append(el('tr', {}, cells(line).map((cell) =>
        el(cell.header ? 'th' : 'td', {}, inline(cell.text.trim(), options)))));
      continue;
    }
    endTable();
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      const level = Number(heading[1]);
      out.push(el(`h${Math.min(6, level + 2)}`, {class: `markup-h${level}`}, inline(heading[2], options)));
    } else if (RULE.test(line)) {
      endParagraph();
      out.push(el('hr'));
    } else if (QUOTE_LINE.test(line)) {
      endParagraph();
      out.push(el('blockquote', {}, [paragraph([QUOTE_LINE.exec(line)[1]], options)]));
    } else if (!line.trim()) {
      endParagraph();
    } else {
      para.push(line);
    }
  }
  endParagraph();
  yield offset - 1;
}

/** Run steps to their end (a render in one go). */
function drain(steps) {
  for (const _ of steps);  // eslint-disable-line no-unused-vars
}

/**
 * For each {quote} tag (by index in `tags`), whether it opens a quote that a later tag closes:
 * the render's own walk over the tags (code blocks skipped the same way), without building nodes,
 * so that a quote can be drawn while it is read (an unclosed one is shown as typed).
 */
function closedQuotes(tags, nextClose) {
  const closed = new Uint8Array(tags.length);
  let at = 0;
  let open = -1;
  for (let index = 0; index < tags.length; index += 1) {
    const tag = tags[index];
    if (tag.index < at) continue;
    at = tag.index + tag[0].length;
    if (tag[1] === 'quote') {
      if (open >= 0) {
        closed[open] = 1;
        open = -1;
      } else {
        open = index;
      }
    } else if (nextClose[index] >= 0) {
      at = tags[nextClose[index]].index + tags[nextClose[index]][0].length;
      index = nextClose[index];
    }
  }
  return closed;
}

/**
 * The render's steps: nodes appended to `root` as the source is read, yielding the source offset
 * reached after each line or block (what markupInSteps counts its budget in).
 */
function* build(text, options, root) {
  if (text.length > (options.limit ?? MARKUP_LIMIT)) {
    root.setAttribute('class', 'markup plain');
    for (let at = 0; at < text.length; at += PLAIN_STEP) {
      root.append(text.slice(at, at + PLAIN_STEP));
      yield Math.min(text.length, at + PLAIN_STEP);
    }
    return;
  }
  const tags = [...text.matchAll(BLOCK_TAG)];
  // For each tag, the index of the next bare closing tag of its kind (one pass from the end).
  const nextClose = new Int32Array(tags.length + 1).fill(-1);
  const seen = {code: -1, noformat: -1, quote: -1};
  for (let index = tags.length - 1; index >= 0; index -= 1) {
    nextClose[index] = seen[tags[index][1]];
    if (tags[index][2] === undefined) seen[tags[index][1]] = index;
  }
  const closed = closedQuotes(tags, nextClose);
  let parent = root;  // an open {quote}'s blockquote, else the root
  let plain = '';
  let plainAt = 0;  // where `plain` starts in the source
  let at = 0;
  for (let index = 0; index < tags.length; index += 1) {
    const tag = tags[index];
    if (tag.index < at) continue;  // inside a code block
    if (!plain) plainAt = at;
    plain += text.slice(at, tag.index);
    at = tag.index + tag[0].length;
    const kind = tag[1];
    if (kind === 'quote') {
      yield* blocks(plain, options, parent, plainAt);
      plain = '';
      if (parent !== root) {
        if (!parent.childNodes.length) parent.remove();  // an empty quote is not drawn
        parent = root;
      } else if (closed[index]) {
        parent = el('blockquote');
        root.append(parent);
      } else {  // never closed: the tag shown as typed, what follows outside a quote
        drain(blocks(tag[0], options, root));
      }
      continue;
    }
    // {code…}/{noformat}: everything up to the next bare closing tag of its kind is literal
    const close = nextClose[index];
    if (close < 0) {
      plain += tag[0];  // never closed: shown as typed
      continue;
    }
    yield* blocks(plain, options, parent, plainAt);
    plain = '';
    const body = text.slice(at, tags[close].index).replace(/^\r?\n/, '').replace(/\r?\n$/, '');
    const language = kind === 'code' && tag[2] ? tag[2].split('|')[0].trim() : '';
    const attrs = {class: kind === 'code' ? 'code' : 'noformat'};
    if (language && !language.includes('=')) attrs['data-lang'] = language;
    parent.append(el('pre', attrs, [el('code', {}, [body])]));
    at = tags[close].index + tags[close][0].length;
    index = close;
    yield at;
  }
  if (!plain) plainAt = at;
  plain += text.slice(at);
  yield* blocks(plain, options, parent, plainAt);
}

/**
 * Jira wiki markup as a `div.markup` of DOM nodes. options.person(login) may give the text shown
 * for `[~login]` (a display name); a text longer than options.limit (MARKUP_LIMIT) is shown as
 * plain text in a `div.markup.plain`.
 */
export function renderMarkup(source, options = {}) {
  const root = el('div', {class: 'markup'});
  drain(build(typeof source === 'string' ? source : '', options, root));
  return root;
}

/**
 * Jira markup rendered in steps, for texts too big to build at once (a 130 KB wiki table is
 * ~40,000 nodes, seconds of a blocked tab): `element` holds what is rendered so far, `rendered`
 * how many characters of the source that is (the whole source when `done`). `advance(stop)`
 * renders on, a line or block at a time, until `stop()` says so or the source ends; it returns
 * `done`. The first call renders the first `options.budget` characters (at a line's end; all
 * of a text within it). The nodes equal renderMarkup's in the end.
 */
export function markupInSteps(source, options = {}) {
  const text = typeof source === 'string' ? source : '';
  const element = el('div', {class: 'markup'});
  const steps = build(text, options, element);
  const state = {element, rendered: 0, done: false, size: text.length};
  state.advance = (stop) => {
    while (!state.done) {
      const next = steps.next();
      if (next.done) {
        state.done = true;
        state.rendered = text.length;
      } else {
        state.rendered = next.value;
        if (stop()) break;
      }
    }
    return state.done;
  };
  const budget = options.budget ?? Infinity;
  state.advance(() => state.rendered >= budget);
  return state;
}
