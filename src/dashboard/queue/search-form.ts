// "Find" in a queue: by job id (opens the job's own view) or by group (narrows the jobs tabs to
// that group's jobs). A plain form: Enter submits, the field keeps what was typed.
import { h } from '../dom';
import { jobHref } from '../links';

export function searchForm(queue: string, showGroup: (group: string) => void): HTMLElement {
  const by = h('select', { id: 'search-by', name: 'by' }, h('option', { value: 'id' }, 'Job id'), h('option', { value: 'group' }, 'Group'));
  const text = h('input', { id: 'search-text', name: 'text', type: 'search', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'search-error' });
  const error = h('p', { id: 'search-error', class: 'form-error', role: 'alert' });
  const form = h(
    'form',
    { class: 'search-form', role: 'search', 'aria-labelledby': 'search-heading', novalidate: true },
    h('h2', { id: 'search-heading' }, 'Find jobs'),
    h('div', { class: 'form-row' },
      h('label', { for: 'search-by', class: 'visually-hidden' }, 'Find by'),
      by,
      h('label', { for: 'search-text', class: 'visually-hidden' }, 'Job id or group'),
      text,
      h('button', { type: 'submit' }, 'Find')),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if (value === '') {
      error.textContent = by.value === 'id' ? 'Enter a job id.' : 'Enter a group.';
      text.focus();
      return;
    }
    error.textContent = '';
    if (by.value === 'id') window.location.hash = jobHref(queue, value);
    else showGroup(value);
  });
  return h('section', { class: 'card' }, form);
}
