// A JSON value typed in a text field: the text, the error shown under the field, `field` (the props that bind a
// TextField or TextArea to both), and `withValue`, which parses it (blank text is `empty`) and hands the value on, or
// sets the error instead.
import { useState } from 'react';

type Options = {
  /** The value of blank text. */
  empty: unknown;
  /** Put before the parser's message. */
  prefix?: string;
  /** A further check of the parsed value: the message when it is refused. */
  check?: (value: unknown) => string | undefined;
};

export function useJsonText(initial: string, { empty, prefix = 'Not valid JSON: ', check }: Options) {
  const [text, setText] = useState(initial);
  const [error, setError] = useState<string>();
  const withValue = (use: (value: unknown) => void) => {
    let value: unknown;
    try {
      value = text.trim() ? JSON.parse(text) : empty;
    } catch (err) {
      setError(`${prefix}${(err as Error).message}`);
      return;
    }
    const refused = check?.(value);
    if (refused) {
      setError(refused);
      return;
    }
    setError(undefined);
    use(value);
  };
  const field = { value: text, error, onChange: (e: { target: { value: string } }) => setText(e.target.value) };
  return { text, setText, error, field, withValue };
}
