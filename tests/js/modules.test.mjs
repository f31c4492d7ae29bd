// Every module of the page loads (syntax, imports, top-level code) — main.js aside, which boots the
// page on import.
import assert from 'node:assert/strict';
import {readdirSync} from 'node:fs';
import {test} from 'node:test';

import './dom-shim.mjs';

const ROOT = new URL('../../hubweb/ui/static/js/', import.meta.url);

test('every module of the page loads', async () => {
  const names = [...readdirSync(ROOT).filter((name) => name.endsWith('.js') && name !== 'main.js'),
    ...readdirSync(new URL('views/', ROOT)).filter((name) => name.endsWith('.js')).map((name) => `views/${name}`)];
  assert.ok(names.length >= 15);
  for (const name of names) {
    const module = await import(new URL(name, ROOT));
    assert.ok(module, name);
  }
});
