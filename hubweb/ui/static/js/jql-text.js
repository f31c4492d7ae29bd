// Editing a JQL query's text the way the issues list needs it: the ORDER BY a column header sets,
// and the `field IN (…)` terms the facet filters add. The hub parses and judges the query (contract
// §16); this only splits it at top-level ORDER BY / AND (outside quotes and parentheses) and puts
// the parts back, so whatever the person typed is kept as typed.

const WORD = /[\p{L}\p{N}_.:/@*-]/u;

/** Top-level pieces: [{text, word}] with quoted strings and parentheses kept whole. */
function pieces(text) {
  const out = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (/\s/.test(ch)) {
      out.push({text: ch, space: true});
      i += 1;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== ch) j += text[j] === '\\' ? 2 : 1;
      out.push({text: text.slice(i, j + 1)});
      i = j + 1;
    } else if (ch === '(') {
      let depth = 0;
      let j = i;
      for (; j < text.length; j += 1) {
        const c = text[j];
        if (c === '"' || c === "'") {
          j += 1;
          while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
        } else if (c === '(') {
          depth += 1;
        } else if (c === ')') {
          depth -= 1;
          if (!depth) break;
        }
      }
      out.push({text: text.slice(i, j + 1)});
      i = j + 1;
    } else if (WORD.test(ch)) {
      let j = i;
      while (j < text.length && WORD.test(text[j])) j += 1;
      const word = text.slice(i, j);
      out.push({text: word, word: word.toUpperCase()});
      i = j;
    } else {
      out.push({text: ch});
      i += 1;
    }
  }
  return out;
}

/** {where, order}: the query before a top-level ORDER BY and the sort list after it. */
export function splitOrder(jql) {
  const parts = pieces(jql || '');
  for (let index = 0; index < parts.length; index += 1) {
    if (parts[index].word !== 'ORDER') continue;
    let next = index + 1;
    while (next < parts.length && parts[next].space) next += 1;
    if (next < parts.length && parts[next].word === 'BY') {
      return {where: parts.slice(0, index).map((p) => p.text).join('').trim(),
        order: parts.slice(next + 1).map((p) => p.text).join('').trim()};
    }
  }
  return {where: (jql || '').trim(), order: ''};
}

/** The query put back together. */
export function joinQuery(where, order) {
  return [where.trim(), order.trim() ? `ORDER BY ${order.trim()}` : ''].filter(Boolean).join(' ');
}

/** The first sort of a query: {field, desc} with the field as written (lower case), or null. */
export function firstSort(jql) {
  const {order} = splitOrder(jql);
  if (!order) return null;
  const first = order.split(',')[0].trim();
  const match = /^("[^"]*"|'[^']*'|\S+)(?:\s+(ASC|DESC))?$/i.exec(first);
  if (!match) return null;
  return {field: match[1].replace(/^["']|["']$/g, '').toLowerCase(),
    desc: (match[2] || '').toUpperCase() === 'DESC'};
}

/**
 * The query sorted by `field` (a JQL order field): ascending, or descending when it is already
 * sorted ascending by it — a second click on a header reverses the order.
 */
export function sortedBy(jql, field) {
  const {where} = splitOrder(jql);
  const current = firstSort(jql);
  const desc = Boolean(current && current.field === field.toLowerCase() && !current.desc);
  const name = /\s/.test(field) ? `"${field}"` : field;
  return joinQuery(where, `${name} ${desc ? 'DESC' : 'ASC'}`);
}

/** Top-level AND-ed terms of a condition, or null when it has a top-level OR. */
function terms(where) {
  const parts = pieces(where);
  if (parts.some((p) => p.word === 'OR')) return null;
  const found = [];
  let current = [];
  for (const part of parts) {
    if (part.word === 'AND') {
      found.push(current.map((p) => p.text).join('').trim());
      current = [];
    } else {
      current.push(part);
    }
  }
  found.push(current.map((p) => p.text).join('').trim());
  return found.filter(Boolean);
}

export const quote = (value) => `"${String(value).replace(/[\\"]/g, (ch) => `\\${ch}`)}"`;

function unquote(text) {
  const match = /^(["'])(.*)\1$/s.exec(text.trim());
  return match ? match[2].replace(/\\(.)/g, '$1') : text.trim();
}

/** A list item: its value with quotes removed, or null for the bare keyword EMPTY (or NULL). */
function listItem(text) {
  return /^(EMPTY|NULL)$/i.test(text.trim()) ? null : unquote(text);
}

/** Values in a `( … , … )` list, quotes removed; EMPTY as null. */
function listValues(text) {
  const inner = text.trim().replace(/^\(|\)$/g, '');
  const values = [];
  let current = '';
  let quoteChar = null;
  for (let i = 0; i < inner.length; i += 1) {
    const ch = inner[i];
    if (quoteChar) {
      current += ch;
      if (ch === '\\') {
        current += inner[i + 1] || '';
        i += 1;
      } else if (ch === quoteChar) {
        quoteChar = null;
      }
    } else if (ch === '"' || ch === "'") {
      quoteChar = ch;
      current += ch;
    } else if (ch === ',') {
      values.push(listItem(current));
      current = '';
    } else {
      current += ch;
    }
  }
  if (current.trim()) values.push(listItem(current));
  return values;
}

/** {values, empty} of list items (EMPTY is null). */
function chosenOf(items, empty = false) {
  return {values: items.filter((item) => item !== null), empty: empty || items.includes(null)};
}

/**
 * What a term selects of a facet field, when it has the shape the facet filters write,
 * `field IN (v, …)` with `EMPTY` among the values for «no value», or one typed by hand:
 * `field = v`, `field IS EMPTY`, `(field IN (…) OR field IS EMPTY)`.
 * {values: [...], empty: bool} or null.
 */
function selection(term, names) {
  const field = `(?:${names.map((n) => n.replace(/\s/g, '\\s+')).join('|')})`;
  let text = term.trim();
  const grouped = new RegExp(`^\\(\\s*${field}\\s+IN\\s*(\\(.*\\))\\s+OR\\s+${field}\\s+IS\\s+EMPTY\\s*\\)$`, 'is')
    .exec(text);
  if (grouped) return chosenOf(listValues(grouped[1]), true);
  text = text.replace(/^\((.*)\)$/s, '$1').trim();
  if (new RegExp(`^${field}\\s+IS\\s+(EMPTY|NULL)$`, 'i').test(text)) return {values: [], empty: true};
  const inList = new RegExp(`^${field}\\s+IN\\s*(\\(.*\\))$`, 'is').exec(text);
  if (inList) return chosenOf(listValues(inList[1]));
  const equal = new RegExp(`^${field}\\s*=\\s*("(?:[^"\\\\]|\\\\.)*"|'(?:[^'\\\\]|\\\\.)*'|[^\\s()]+)$`, 'is').exec(text);
  if (equal) return chosenOf([listItem(equal[1])]);
  return null;
}

/** The values a query selects of a facet field (its names: field and aliases), or null. */
export function facetSelection(jql, names) {
  const list = terms(splitOrder(jql).where);
  if (!list) return null;
  for (const term of list) {
    const found = selection(term, names);
    if (found) return found;
  }
  return null;
}

/**
 * The query with its selection of a facet field replaced: `field IN (…)`, with `EMPTY` in the
 * list for the empty value (every choice field takes it; `issuetype IS EMPTY` is refused), or
 * nothing when no value is chosen. Other terms stay as typed; a condition with a top-level OR is
 * kept whole in parentheses.
 */
export function withFacet(jql, names, field, values, empty = false) {
  const {where, order} = splitOrder(jql);
  let list = terms(where);
  if (list === null) list = [`(${where})`];
  list = list.filter((term) => !selection(term, names));
  const listed = [...values.map(quote), ...(empty ? ['EMPTY'] : [])];
  if (listed.length) list.push(`${field} IN (${listed.join(', ')})`);
  return joinQuery(list.join(' AND '), order);
}

/**
 * The choices of the facet lists a query holds and the query without them, for
 * `GET /issues/facets?jql=&chosen=`: each list is then counted within the query and the other
 * lists' choices, not its own. facets: [{key, names}] (the facet's answer key and its field's
 * names); chosen: {key: [values, null for «no value»]} for each field that exactly one top-level
 * term selects (a field selected twice keeps its terms in the query).
 */
export function facetChoices(jql, facets) {
  const {where, order} = splitOrder(jql);
  let list = terms(where);
  const chosen = {};
  if (list === null) return {jql, chosen};
  for (const {key, names} of facets) {
    const found = list.map((term) => selection(term, names));
    const hits = found.filter(Boolean);
    if (hits.length !== 1) continue;
    chosen[key] = [...hits[0].values, ...(hits[0].empty ? [null] : [])];
    list = list.filter((term, index) => !found[index]);
  }
  return {jql: joinQuery(list.join(' AND '), order), chosen};
}
