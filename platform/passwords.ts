// Password hashing: argon2id with the OWASP-recommended parameters.
import crypto from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

// algorithm defaults to argon2id.
const PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Hashes a password into a PHC string. */
export async function hashPassword(password: string): Promise<string> {
  return await hash(password, PARAMS);
}

/** True when `password` matches the PHC string `hashed`. */
export async function verifyPassword(hashed: string, password: string): Promise<boolean> {
  try {
    return await verify(hashed, password);
  } catch {
    return false;
  }
}

/** A hash of a random password: verified against when an account is unknown, so both paths cost the same. */
export async function dummyPasswordHash(): Promise<string> {
  return await hashPassword(crypto.randomBytes(24).toString('base64url'));
}
