// Small input rules shared by the functions services. Each check names the field it refuses.
import { errors } from '../../../platform/errors.ts';
import { isStorableTime } from '../../../platform/input-guard.ts';

/** A page size: 1 to `max`, `fallback` when absent. */
export function checkPageSize(field: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max)
    throw errors.validation(field, `must be a whole number from 1 to ${max}`);
  return value;
}

/** An optional string of at most `max` characters, trimmed. */
export function optionalText(field: string, value: unknown, max: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw errors.validation(field, 'must be a string');
  const v = value.trim();
  if (v.length > max) throw errors.validation(field, `must be at most ${max} characters`);
  return v;
}

/** A required non-empty string of at most `max` characters. */
export function requiredText(field: string, value: unknown, max: number, trim = true): string {
  if (typeof value !== 'string') throw errors.validation(field, 'is required (a string)');
  const v = trim ? value.trim() : value;
  if (v.length === 0) throw errors.validation(field, 'must not be empty');
  if (v.length > max) throw errors.validation(field, `must be at most ${max} characters`);
  return v;
}

/** An ISO 8601 time (or undefined). */
export function optionalTime(field: string, value: unknown): Date | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const d = typeof value === 'string' ? new Date(value) : undefined;
  if (!d || !isStorableTime(d))
    throw errors.validation(field, 'must be an ISO 8601 time from year 0001 to 9999, e.g. 2026-01-31T12:00:00Z');
  return d;
}
