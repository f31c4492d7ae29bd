// Actions on the issue card (contract §15a): add a comment, move to a status of the project's
// board, edit summary, assignee, priority and due date (`ensure_issue` with `key`). Each is one
// batch of one command: «Проверить» sends it with `"dry_run": true` (the hub validates it and
// stores nothing) and shows what would be queued; «Поставить в очередь» then queues it as shown.
import {cachedGet, post, seg} from '../api.js';
import {field, h, message, valueList} from '../dom.js';
import {COMMAND_TYPE, seconds} from '../format.js';
import {batchLink, rememberAuthor, rememberedAuthor, section, showErrors} from './common.js';

/** Hub projects whose own issues include this one (its labels), else every project. */
function projectsOf(issue, projects) {
  const own = projects.filter((p) => (issue.labels || []).includes(p.label));
  return own.length ? own : projects;
}

/**
 * Statuses of the boards of the issue's projects, in column order, without duplicates. Read once
 * a tab (the board is the heaviest read of a project) and only when the person opens the action.
 */
async function boardStatuses(issue) {
  const projects = projectsOf(issue, (await cachedGet('/projects')).items).filter((p) => p.board_id);
  const boards = await Promise.all(projects.map((p) => cachedGet(`/projects/${seg(p.label)}/board`)));
  const statuses = [];
  for (const board of boards) {
    for (const column of board.columns || []) {
      for (const status of column.statuses || []) if (!statuses.includes(status)) statuses.push(status);
    }
  }
  return statuses;
}

/** The hub's name for a Jira value among a setting's entries ([hubName, jiraName]), or null. */
function hubName(entries, jiraName) {
  const found = entries.find(([, name]) => name === jiraName);
  return found ? found[0] : null;
}

/**
 * One action: a form whose fields make one command. `make(values)` → {title, command} or a
 * message string when there is nothing to queue.
 */
function actionForm({project, author, legend, fields, make, clearAfter = [], open = false}) {
  const preview = h('div', {class: 'preview', hidden: true});
  const status = h('div', {class: 'form-status'});
  const check = h('button', {type: 'submit'}, 'Проверить');
  const form = h('form', {class: 'action', novalidate: true, 'aria-label': legend},
    Object.values(fields).map((f) => f.wrap), h('div', {class: 'actions'}, check), preview, status);
  const targets = (index = 0) => {
    const map = {author};
    for (const [name, f] of Object.entries(fields)) map[`commands[${index}].params.${name}`] = f;
    return map;
  };
  let pending = null;
  const body = () => {
    const values = Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, f.input.value]));
    const made = make(values);
    if (typeof made === 'string') return made;
    return {title: made.title, author: author.input.value.trim() || null, project,
      commands: [made.command]};
  };
  const showPreview = (batch) => {
    const queue = h('button', {type: 'button'}, 'Поставить в очередь');
    const back = h('button', {type: 'button', class: 'secondary'}, 'Изменить');
    preview.replaceChildren(
      h('p', {class: 'preview-title'}, 'Будет поставлен пакет «', batch.title, '»',
        batch.estimate_seconds !== undefined && batch.estimate_seconds !== null
          ? ` · оценка ${seconds(batch.estimate_seconds)}` : ''),
      h('ul', {class: 'plain'}, (batch.commands || pending.commands).map((c) => h('li', {},
        h('span', {class: 'command-type'}, COMMAND_TYPE[c.type] || c.type), ': ', valueList(c.params)))),
      h('div', {class: 'actions'}, queue, back));
    preview.hidden = false;
    check.hidden = true;
    queue.focus();
    back.addEventListener('click', () => {
      preview.hidden = true;
      check.hidden = false;
      pending = null;
      check.focus();
    });
    queue.addEventListener('click', async () => {
      queue.disabled = true;
      back.disabled = true;
      try {
        const created = await post('/batches', pending);
        rememberAuthor(pending.author);
        preview.hidden = true;
        check.hidden = false;
        pending = null;
        for (const name of clearAfter) fields[name].input.value = '';
        status.replaceChildren(h('p', {class: 'message message-ok', role: 'status'},
          'Пакет ', batchLink(created.id), ' поставлен в очередь.'));
      } catch (error) {
        preview.hidden = true;
        check.hidden = false;
        showErrors(error, targets(), status);
      } finally {
        queue.disabled = false;
        back.disabled = false;
      }
    });
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    status.replaceChildren();
    const made = body();
    if (typeof made === 'string') {
      status.replaceChildren(message(made, 'info'));
      return;
    }
    check.disabled = true;
    try {
      const checked = await post('/batches', {...made, dry_run: true});
      for (const f of Object.values(targets())) f.setError(null);
      pending = made;
      showPreview(checked || made);
    } catch (error) {
      showErrors(error, targets(), status);
    } finally {
      check.disabled = false;
    }
  });
  return h('details', {class: 'action', open}, h('summary', {}, legend), form);
}

export default async function issueActions(issue) {
  const [settings, projects] = await Promise.all([cachedGet('/settings'), cachedGet('/projects')]);
  // the batch belongs to the hub project the issue is an own issue of (the first, if several)
  const own = projects.items.find((p) => (issue.labels || []).includes(p.label));
  const project = own ? own.label : null;
  const author = field('Автор пакетов', 'author', {value: rememberedAuthor(),
    attrs: {autocomplete: 'username'}, hint: 'от чьего имени ставятся действия'});
  const common = {project, author};

  const comment = actionForm({...common, legend: 'Комментарий', open: true, clearAfter: ['body'],
    fields: {body: field('Текст комментария', 'body', {kind: 'textarea', required: true})},
    make: ({body}) => (body.trim() ? {title: `Комментарий к ${issue.key}`,
      command: {type: 'add_comment', params: {key: issue.key, body}}} : 'Напишите текст комментария.')});

  const statusField = field('Новый статус', 'status', {kind: 'select', required: true,
    options: [['', 'загрузка статусов доски…']]});
  const transition = actionForm({...common, legend: 'Перевести в статус', fields: {status: statusField},
    make: ({status}) => (status ? {title: `Перевод ${issue.key}: ${status}`,
      command: {type: 'transition', params: {key: issue.key, status}}} : 'Выберите статус.')});
  let statusesLoaded = false;
  transition.addEventListener('toggle', async () => {
    if (!transition.open || statusesLoaded) return;
    statusesLoaded = true;
    try {
      const statuses = (await boardStatuses(issue)).filter((s) => s !== issue.status);
      statusField.input.replaceChildren(...(statuses.length
        ? [h('option', {value: ''}, 'выберите статус'), ...statuses.map((s) => h('option', {value: s}, s))]
        : [h('option', {value: ''}, 'у досок проектов нет статусов')]));
    } catch (error) {
      statusesLoaded = false;
      statusField.setError(`статусы доски не получены: ${error.message}`);
    }
  });

  const issueTypes = Object.entries(settings.issue_types || {}).map(([logical, value]) =>
    [logical, value && value.name]);
  const priorities = Object.entries(settings.priority_map || {});
  const typeKey = hubName(issueTypes, issue.issue_type);
  const priorityKey = hubName(priorities, issue.priority);
  const editFields = {
    summary: field('Сводка', 'summary', {value: issue.summary || '', required: true, attrs: {maxlength: 255}}),
    assignee: field('Исполнитель', 'assignee', {value: issue.assignee || '', hint: 'логин в Jira'}),
    priority: priorities.length
      ? field('Приоритет', 'priority', {kind: 'select', value: priorityKey || '',
        options: [['', priorityKey || !issue.priority ? 'не менять' : `${issue.priority} (не менять)`],
          ...priorities.map(([hub, jira]) => [hub, `${jira} (${hub})`])]})
      : field('Приоритет', 'priority', {value: '', hint: `сейчас: ${issue.priority || 'нет'}; имя приоритета`}),
    duedate: field('Срок', 'duedate', {type: 'date', value: issue.duedate || ''}),
  };
  const edit = actionForm({...common, legend: 'Изменить поля', fields: editFields, make: (values) => {
    if (!typeKey) {
      return `Тип задачи «${issue.issue_type || 'нет'}» не настроен в issue_types: изменение через `
        + 'ensure_issue недоступно.';
    }
    const params = {issue_type: typeKey, key: issue.key, summary: values.summary.trim()};
    const changed = [];
    if (values.summary.trim() !== (issue.summary || '')) changed.push('сводка');
    // ensure_issue changes what it is given (null = not given), so a value cannot be cleared
    if (!values.assignee.trim() && issue.assignee) return 'Снять исполнителя командой нельзя: укажите другого.';
    if (!values.duedate && issue.duedate) return 'Убрать срок командой нельзя: укажите другую дату.';
    if (values.assignee.trim() !== (issue.assignee || '')) {
      params.assignee = values.assignee.trim();
      changed.push('исполнитель');
    }
    if (values.priority && values.priority !== (priorityKey || issue.priority || '')) {
      params.priority = values.priority;
      changed.push('приоритет');
    }
    if (values.duedate !== (issue.duedate || '')) {
      params.duedate = values.duedate;
      changed.push('срок');
    }
    if (!changed.length) return 'Ничего не изменено.';
    return {title: `Изменение ${issue.key}: ${changed.join(', ')}`, command: {type: 'ensure_issue', params}};
  }});

  return section('Действия',
    h('p', {class: 'hint'}, 'Агент выполнит действие в Jira; сначала хаб проверит пакет и покажет его.'),
    author.wrap, comment, transition, edit);
}

