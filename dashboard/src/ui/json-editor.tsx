// A JSON editor: a text area with line numbers where the lines that have issues are marked, and the issues listed
// under it (each names its line and place). Keyboard: Tab indents by two spaces; Escape then Tab leaves the field.
import { useRef, useState, type KeyboardEvent } from 'react';
import type { Issue } from '../lib/function-schema.ts';

export function JsonEditor({
  label,
  value,
  onChange,
  issues,
  rows = 18,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  issues: Issue[];
  rows?: number;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const [tabLeaves, setTabLeaves] = useState(false);
  const bad = new Set(issues.map((i) => i.line));
  const count = Math.max(value.split('\n').length, rows);
  const keyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Escape') setTabLeaves(true);
    if (e.key !== 'Tab' || tabLeaves || e.shiftKey) return;
    e.preventDefault();
    const t = e.currentTarget;
    const { selectionStart: s, selectionEnd: end } = t;
    onChange(`${value.slice(0, s)}  ${value.slice(end)}`);
    requestAnimationFrame(() => t.setSelectionRange(s + 2, s + 2));
  };
  return (
    <div className="field">
      <label htmlFor="json-editor">{label}</label>
      <div className="editor">
        <div className="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: count }, (_, i) => (
            <div key={i} className={bad.has(i + 1) ? 'bad' : undefined}>
              {i + 1}
            </div>
          ))}
        </div>
        <textarea
          id="json-editor"
          ref={area}
          className="code"
          rows={rows}
          spellCheck={false}
          value={value}
          aria-invalid={issues.length > 0 || undefined}
          aria-describedby="json-editor-issues json-editor-hint"
          onChange={(e) => onChange(e.target.value)}
          onKeyDown={keyDown}
          onBlur={() => setTabLeaves(false)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      <div className="hint" id="json-editor-hint">
        Tab indents; press Escape, then Tab, to move on.
      </div>
      <ul className="issues" id="json-editor-issues" aria-live="polite">
        {issues.map((i, n) => (
          <li key={n}>
            <button
              type="button"
              className="btn btn-ghost btn-small"
              onClick={() => goToLine(area.current, value, i.line)}
            >
              Line {i.line}
            </button>{' '}
            {i.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Puts the caret at the start of a line. */
function goToLine(t: HTMLTextAreaElement | null, text: string, line: number): void {
  if (!t) return;
  let offset = 0;
  for (let n = 1; n < line; n++) offset = text.indexOf('\n', offset) + 1;
  t.focus();
  t.setSelectionRange(offset, offset);
}
