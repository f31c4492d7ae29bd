// #/new-batch?key=&type= — a form that queues a batch: refresh by keys or by the base JQL,
// comment, transition, new issue. The API validates; its 422 field errors
// (`title`, `commands[0].params.key`…) are shown next to the fields they name. A new issue gets
// a free temp key from GET /temp-keys/next (a temp key names one future issue hub-wide).
import {cachedGet, get, post} from '../api.js';
import {field, h, message} from '../dom.js';
import {COMMAND_TYPE} from '../format.js';
import {rememberAuthor, rememberedAuthor, showErrors} from './common.js';

const TYPES = ['refresh', 'add_comment', 'transition', 'ensure_issue'];
const TYPE_LABEL = {...COMMAND_TYPE, ensure_issue: 'новая задача'};

/** Params of each type: [name, label, options]; `list` values are comma-separated text. */
function paramSpecs(type, settings) {
  const issueTypes = Object.entries(settings.issue_types || {})
    .map(([logical, value]) => [logical, value && value.name ? `${value.name} (${logical})` : logical]);
  switch (type) {
    case 'refresh':
      return [
        ['mode', 'Что обновить', {kind: 'select', local: true, options: [
          ['keys', 'задачи по ключам'], ['jql', 'все задачи проектов (базовая JQL)']]}],
        ['keys', 'Ключи задач', {list: true, hint: 'через запятую: AURORA-1, AURORA-2', when: 'keys'}],
        ['jql', 'Базовая JQL', {readonly: true, when: 'jql', value: settings.base_jql || '',
          hint: settings.base_jql ? 'собирается хабом из проектов' : 'нет: не задан project_key или проекты'}],
      ];
    case 'add_comment':
      return [['key', 'Ключ задачи', {required: true}],
        ['body', 'Текст комментария', {kind: 'textarea', required: true}]];
    case 'transition':
      return [['key', 'Ключ задачи', {required: true}],
        ['status', 'Целевой статус', {required: true, hint: 'имя статуса в Jira, например «В работе»'}]];
    case 'ensure_issue':
      return [
        ['issue_type', 'Тип задачи', {kind: 'select', required: true, options: issueTypes}],
        ['summary', 'Сводка', {required: true}],
        ['description', 'Описание', {kind: 'textarea'}],
        ['priority', 'Приоритет', {}],
        ['assignee', 'Исполнитель', {}],
        ['duedate', 'Срок', {type: 'date'}],
        ['epic_key', 'Эпик (ключ)', {}],
        ['labels', 'Метки', {list: true, hint: 'через запятую'}],
        ['temp_key', 'Временный ключ', {readonly: true, tempKey: true,
          hint: 'имя будущей задачи до ответа Jira: под ним можно вести заметку'}],
      ];
    default:
      return [];
  }
}

const splitList = (text) => text.split(/[\s,;]+/).filter(Boolean);

class CommandEditor {
  constructor(index, settings, initial, onRemove, onType) {
    this.settings = settings;
    this.tempKey = '';
    this.values = {...initial};
    this.legend = h('legend', {});
    this.typeField = field('Тип команды', 'type', {kind: 'select', value: initial.type || 'refresh',
      options: TYPES.map((t) => [t, TYPE_LABEL[t]])});
    this.typeField.input.addEventListener('change', () => {
      this.drawParams();
      onType();
    });
    this.params = h('div', {class: 'params'});
    this.status = h('div', {class: 'form-status'});
    this.remove = h('button', {type: 'button', class: 'secondary'}, 'Убрать команду');
    this.remove.addEventListener('click', () => onRemove(this));
    this.element = h('fieldset', {class: 'command'}, this.legend, this.typeField.wrap, this.params,
      this.status, this.remove);
    this.setIndex(index);
    this.drawParams();
  }

  setIndex(index) {
    this.index = index;
    this.legend.textContent = `Команда ${index + 1}`;
    this.remove.setAttribute('aria-label', `Убрать команду ${index + 1}`);
  }

  keep() {
    for (const [name, f] of Object.entries(this.fields || {})) {
      if (!f.input.readOnly) this.values[name] = f.input.value;
    }
  }

  drawParams() {
    this.keep();
    const type = this.typeField.input.value;
    this.fields = {};
    const specs = paramSpecs(type, this.settings);
    for (const [name, label, options] of specs) {
      const fixed = options.tempKey ? this.tempKey : options.value;
      this.fields[name] = field(label, name, {...options, value: options.readonly ? fixed
        : this.values[name] ?? (options.kind === 'select' && options.options.length ? options.options[0][0] : ''),
      attrs: options.readonly ? {readonly: true} : {}});
      this.fields[name].spec = options;
    }
    const mode = this.fields.mode;
    const toggle = () => {
      for (const f of Object.values(this.fields)) {
        if (f.spec.when) f.wrap.hidden = f.spec.when !== mode.input.value;
      }
    };
    if (mode) mode.input.addEventListener('change', toggle);
    this.params.replaceChildren(...Object.values(this.fields).map((f) => f.wrap));
    if (mode) toggle();
  }

  get isNewIssue() {
    return this.typeField.input.value === 'ensure_issue';
  }

  setTempKey(key) {
    this.tempKey = key;
    if (this.fields.temp_key) this.fields.temp_key.input.value = key;
  }

  body() {
    const type = this.typeField.input.value;
    const params = {};
    const mode = this.fields.mode && this.fields.mode.input.value;
    for (const [name, f] of Object.entries(this.fields)) {
      const {spec} = f;
      if (spec.local || (spec.when && spec.when !== mode)) continue;
      const text = f.input.value.trim();
      if (spec.list) {
        if (text || spec.when) params[name] = splitList(text);
      } else if (text || spec.required || (spec.when && spec.readonly)) {
        params[name] = spec.kind === 'textarea' ? f.input.value : text;
      }
    }
    if (type === 'refresh' && mode === 'jql' && !params.jql) params.jql = null;
    return {type, params};
  }

  fieldsByError() {
    const prefix = `commands[${this.index}]`;
    const map = {[`${prefix}.type`]: this.typeField};
    for (const [name, f] of Object.entries(this.fields)) map[`${prefix}.params.${name}`] = f;
    return map;
  }
}

export default async function newBatch({query}) {
  const [settings, projects] = await Promise.all([cachedGet('/settings'), cachedGet('/projects')]);
  const head = {
    title: field('Название пакета', 'title', {required: true, value: query.title || ''}),
    author: field('Автор', 'author', {value: rememberedAuthor(), attrs: {autocomplete: 'username'}}),
    project: field('Проект', 'project', {kind: 'select', value: query.project || '',
      options: [['', 'без проекта'], ...projects.items.map((p) => [p.label, `${p.label} — ${p.name}`])]}),
  };
  const list = h('div', {class: 'commands'});
  const editors = [];
  const renumber = () => editors.forEach((e, i) => {
    e.setIndex(i);
    e.remove.hidden = editors.length === 1;
  });
  // Each new issue of the form gets its own free temp key, in the order of the commands.
  let asked = 0;
  const assignTempKeys = async () => {
    const creating = editors.filter((e) => e.isNewIssue);
    if (!creating.length) return;
    const turn = ++asked;
    try {
      const free = await get('/temp-keys/next', {count: creating.length});
      if (turn === asked) creating.forEach((e, i) => e.setTempKey(free.temp_keys[i] || ''));
    } catch {
      // no key: the issue is created all the same, only without a name for notes before that
    }
  };
  const removeEditor = (editor) => {
    editors.splice(editors.indexOf(editor), 1);
    editor.element.remove();
    renumber();
    if (editor.isNewIssue) assignTempKeys();
    editors[Math.min(editor.index, editors.length - 1)].typeField.input.focus();
  };
  const addEditor = (initial = {}) => {
    const editor = new CommandEditor(editors.length, settings, initial, removeEditor, assignTempKeys);
    editors.push(editor);
    list.append(editor.element);
    renumber();
    if (editor.isNewIssue) assignTempKeys();
    return editor;
  };
  addEditor(query.key ? {type: query.type || 'add_comment', key: query.key, keys: query.key}
    : {type: query.type || 'refresh'});
  const add = h('button', {type: 'button', class: 'secondary'}, 'Добавить команду');
  add.addEventListener('click', () => addEditor({}).typeField.input.focus());
  const status = h('div', {class: 'form-status'});
  const submit = h('button', {type: 'submit'}, 'Поставить в очередь');
  const form = h('form', {class: 'new-batch', novalidate: true, 'aria-label': 'Новый пакет'},
    h('fieldset', {}, h('legend', {}, 'Пакет'), Object.values(head).map((f) => f.wrap)),
    list, h('div', {class: 'actions'}, add, submit), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const author = head.author.input.value.trim();
    const body = {title: head.title.input.value.trim(), author: author || null,
      project: head.project.input.value || null, commands: editors.map((e) => e.body())};
    const targets = {title: head.title, author: head.author, project: head.project};
    for (const editor of editors) {
      Object.assign(targets, editor.fieldsByError());
      editor.status.replaceChildren();
    }
    submit.disabled = true;
    try {
      const created = await post('/batches', body);
      rememberAuthor(author);
      location.hash = `#/batches/${created.id}`;
    } catch (error) {
      showErrors(error, targets, status);
      // someone queued one of these temp keys meanwhile: offer free ones for the next try
      if (Object.keys(error.fields || {}).some((name) => name.endsWith('.params.temp_key'))) assignTempKeys();
      // a whole-command error (`commands[1]`, `commands[1].params`) goes next to that command
      for (const editor of editors) {
        const own = Object.entries(error.fields || {}).filter(([name]) =>
          name === `commands[${editor.index}]` || name === `commands[${editor.index}].params`
          || name === `commands[${editor.index}].depends_on`);
        if (own.length) editor.status.replaceChildren(message(own.map(([, m]) => [m].flat().join('; ')).join('; ')));
      }
    } finally {
      submit.disabled = false;
    }
  });
  return [
    h('h1', {}, 'Новый пакет команд'),
    h('p', {class: 'lead'}, 'Команды выполнит агент в Jira по очереди; ход — на странице пакета.'),
    form,
  ];
}
