// #/commands/<id> — a command is shown in its batch: this address resolves the batch and
// replaces itself with #/batches/<batch>?command=<id>.
import {get, seg} from '../api.js';
import {h} from '../dom.js';

export default async function command({args: [id], isCurrent}) {
  const data = await get(`/commands/${seg(id)}`);
  if (isCurrent()) location.replace(`#/batches/${seg(data.batch_id)}?command=${seg(data.id)}`);
  return h('p', {}, `Команда №${data.id} — пакет №${data.batch_id}…`);
}
