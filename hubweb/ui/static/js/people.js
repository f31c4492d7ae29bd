// Display names where the mirror has them (contract §15a). Issues and comments keep Jira logins;
// the change history keeps, for a change of assignee or reporter, the login (`from_value`,
// `to_value`) beside the name Jira showed (`from_string`, `to_string`). The page learns those
// pairs from every change row it loads and shows the name, with the login on hover, wherever it
// shows that login afterwards; a login it has no name for is shown as it is.
import {h} from './dom.js';

const PEOPLE_FIELDS = new Set(['assignee', 'reporter']);
const names = new Map();

/** Learn login → name from change rows (GET /changes, GET /issues/{key}/changes items). */
export function learnPeople(rows) {
  for (const row of rows || []) {
    if (!PEOPLE_FIELDS.has(row.field)) continue;
    for (const [login, name] of [[row.from_value, row.from_string], [row.to_value, row.to_string]]) {
      if (login && name && name !== login) names.set(login, name);
    }
  }
}

/** The name known for a login, or the login itself. */
export function nameOf(login) {
  return names.get(login) || login;
}

/** A login as the page shows it: the name with the login in its title, or the login; '—' if none. */
export function person(login) {
  if (!login) return '—';
  const name = names.get(login);
  return name ? h('span', {class: 'person', title: login}, name) : login;
}

/** Forget the names (signing out). */
export function forgetPeople() {
  names.clear();
}
