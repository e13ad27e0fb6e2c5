// Used only by tests/unit/tooling.test.ts to prove the type-stripping transform.
export interface Greeting {
  readonly name: string;
  punctuation?: '!' | '.';
}

export type Shout = (text: string) => string;

export const shout: Shout = (text) => text.toUpperCase();

export function greet(greeting: Greeting): string {
  const mark: string = greeting.punctuation ?? '!';
  return `Hello, ${greeting.name}${mark}`;
}

/** Line number (1-based) at which this function creates its Error. */
export const ERROR_LINE = 19;
export function errorHere(): Error {
  return new Error('from sample-helper');
}
