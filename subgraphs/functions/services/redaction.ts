// Secrets never leave the function engine in clear. Everything a run lets out — its output, its error, its step
// log, a dry run's trace, the records of executions, what is logged — passes through the run's redactor, which
// replaces each secret value by `{{secrets.NAME}}` (so an HTTP step's recorded URL reads as it was written), and
// also the forms a value takes on its way through URLs, headers and bodies: URL-encoded (percent escapes in either
// case, `+` for spaces), JSON-escaped, hex (either case) and base64 (standard and URL-safe, at each of the three
// byte alignments it can have inside a longer encoded text, such as `Basic base64(user:secret)`).
import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';

export type Redactor = {
  /** A copy of `v` (JSON data) with every secret replaced; strings, arrays and plain objects are walked. */
  value: <T>(v: T) => T;
  /** One string with every secret replaced. */
  text: (s: string) => string;
};

/** Values shorter than this are not redacted (they would match everywhere); secrets are usually long random strings. */
const MIN_SECRET = 4;
/** Encoded fragments shorter than this are not looked for (a short base64 core would match ordinary text). */
const MIN_FRAGMENT = 8;

const IDENTITY: Redactor = { value: (v) => v, text: (s) => s };

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Base64 text certainly produced by `bytes` inside a longer input starting `offset` (0-2) bytes before it. */
function base64Core(bytes: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  const first = Math.ceil((8 * offset) / 6);
  const last = Math.floor((8 * (offset + bytes.length)) / 6); // exclusive: the char after it mixes in the next byte
  return encoded.slice(first, last);
}

/** Every form of `value` to look for. */
export function formsOf(value: string): string[] {
  const forms = new Set<string>([value]);
  const bytes = Buffer.from(value, 'utf8');
  const uri = encodeURIComponent(value);
  forms.add(uri);
  forms.add(uri.replace(/%20/g, '+'));
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  forms.add(encodeURI(value));
  forms.add(JSON.stringify(value).slice(1, -1));
  const hex = bytes.toString('hex');
  forms.add(hex);
  forms.add(hex.toUpperCase());
  forms.add(bytes.toString('base64'));
  forms.add(bytes.toString('base64url'));
  for (const offset of [0, 1, 2]) {
    const core = base64Core(bytes, offset);
    if (core.length < MIN_FRAGMENT) continue;
    forms.add(core);
    forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET);
}

// A project's secrets change rarely: its redactor (a compiled pattern) is kept for the next run.
const cache = new LRUCache<string, Redactor>({ max: 1000 });

/** The redactor of a run over the project's secrets (name → value in clear). */
export function createRedactor(secrets: Record<string, string>): Redactor {
  const entries = Object.entries(secrets).filter(([, v]) => typeof v === 'string' && v.length >= MIN_SECRET);
  if (entries.length === 0) return IDENTITY;
  // Keyed by a digest: the cache holds no secret in clear beyond the redactor itself.
  const key = crypto.createHash('sha256').update(JSON.stringify(entries)).digest('base64url');
  const hit = cache.get(key);
  if (hit) return hit;
  const nameOf = new Map<string, string>();
  // Longer values first: a secret containing another is replaced whole.
  for (const [name, value] of entries.sort((a, b) => b[1].length - a[1].length)) {
    for (const form of formsOf(value)) if (!nameOf.has(form)) nameOf.set(form, name);
  }
  const forms = [...nameOf.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
  const shortest = forms[forms.length - 1]!.length;
  const text = (s: string): string =>
    s.length < shortest ? s : s.replace(pattern, (m) => `{{secrets.${nameOf.get(m)}}}`);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && !(v instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[text(k)] = walk(x);
      return out;
    }
    return v;
  };
  const redactor: Redactor = { text, value: <T>(v: T) => walk(v) as T };
  cache.set(key, redactor);
  return redactor;
}
