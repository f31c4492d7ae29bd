// Building the page without HTML strings: every text from Jira or a user goes in as a text node.
// Nothing in this UI uses innerHTML, outerHTML, insertAdjacentHTML or document.write
// (tests/browser/test_static.py checks the sources).

/**
 * h('a', {href: '#/x', class: 'key'}, 'AURORA-1', child...) -> element.
 * Attributes go through setAttribute (never a style attribute: the CSP forbids it), `on*` keys
 * become listeners, booleans toggle attributes, null/undefined/false are skipped.
 * Children: nodes, strings (as text), numbers, arrays of those; null/false are skipped.
 */
export function h(tag, attrs, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'style') {
      throw new Error('style attributes are blocked by the CSP; use a class');
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(parent, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replace an element's children (null/false children are skipped, never shown as "null"). */
export function fill(element, ...children) {
  element.replaceChildren();
  return append(element, children);
}

let idCounter = 0;
/** A page-unique id for label/field/error pairs. */
export function uid(prefix = 'f') {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/**
 * A labelled form field with its error slot: {wrap, input, setError(messages)}.
 * kind: 'input' (default), 'textarea' or 'select'; options for select: [[value, label], ...].
 */
export function field(label, name, {kind = 'input', type = 'text', value = '', options = [],
                                     hint = null, required = false, attrs = {}} = {}) {
  const id = uid(name.replace(/[^a-z0-9_-]/gi, '_'));
  const errorId = `${id}-error`;
  const hintId = hint ? `${id}-hint` : null;
  let input;
  if (kind === 'select') {
    input = h('select', {id, name, required, ...attrs},
      options.map(([optionValue, text]) => h('option', {value: optionValue}, text)));
    input.value = value ?? '';
  } else if (kind === 'textarea') {
    input = h('textarea', {id, name, rows: 3, required, ...attrs});
    input.value = value ?? '';
  } else {
    input = h('input', {id, name, type, required, ...attrs});
    input.value = value ?? '';
  }
  if (hintId) input.setAttribute('aria-describedby', hintId);
  const error = h('p', {id: errorId, class: 'field-error', hidden: true});
  const wrap = h('div', {class: `field field-${kind}`},
    h('label', {for: id}, label),
    input,
    hint ? h('p', {id: hintId, class: 'hint'}, hint) : null,
    error);
  function setError(messages) {
    const text = [messages || []].flat().filter(Boolean).join('; ');
    if (text) {
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', [hintId, errorId].filter(Boolean).join(' '));
      error.textContent = text;
      error.hidden = false;
    } else {
      input.removeAttribute('aria-invalid');
      if (hintId) input.setAttribute('aria-describedby', hintId);
      else input.removeAttribute('aria-describedby');
      error.textContent = '';
      error.hidden = true;
    }
  }
  return {wrap, input, setError};
}

/**
 * A table with a caption: columns = [{label, cell: row => node|string, class?}], rows = [...].
 * An empty list shows `empty` instead.
 */
export function table(caption, columns, rows, {empty = 'Ничего нет.', hideCaption = false} = {}) {
  if (!rows.length) return h('p', {class: 'empty'}, empty);
  return h('div', {class: 'table-wrap'},
    h('table', {},
      h('caption', {class: hideCaption ? 'visually-hidden' : null}, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', {scope: 'col', class: c.class}, c.label)))),
      h('tbody', {}, rows.map((row) => h('tr', {},
        columns.map((c) => h('td', {class: c.class}, c.cell(row))))))));
}

/** Key/value list (a <dl>); pairs with a null/empty value show a dash. */
export function details(pairs) {
  return h('dl', {class: 'details'}, pairs.map(([term, value]) => [
    h('dt', {}, term),
    h('dd', {}, value === null || value === undefined || value === '' ? '—' : value),
  ]));
}

/** A message region: role=alert for errors, role=status otherwise. */
export function message(text, kind = 'error') {
  return h('p', {class: `message message-${kind}`, role: kind === 'error' ? 'alert' : 'status'}, text);
}

/** Params or a result object as "name: value" lines (nested values as JSON text). */
export function valueList(value) {
  if (value === null || value === undefined) return '—';
  if (typeof value !== 'object' || Array.isArray(value)) return h('code', {class: 'json'}, JSON.stringify(value));
  const entries = Object.entries(value);
  if (!entries.length) return '—';
  return h('ul', {class: 'values'}, entries.map(([name, item]) => h('li', {},
    h('span', {class: 'value-name'}, `${name}: `),
    typeof item === 'string' ? item : h('code', {class: 'json'}, JSON.stringify(item)))));
}
