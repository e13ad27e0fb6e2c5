// Ending a credential (API key regenerated, project deleted, session logged out or revoked, signing keys
// rotated) is announced to every process, whose credential caches (router/credential-cache.ts) drop it:
// published inside the transaction that makes the change (delivered at commit, never on rollback), then
// delivered to this process's own listeners right after commit, ahead of the NOTIFY; the change is answered a lease
// later (SYNC_LEASE_MS), by when every process's cache serves only what it checked after the commit.
import {
  afterCommitLease,
  announceLocally,
  publishBroadcast,
  type BroadcastTopics,
} from '../../../platform/broadcast.ts';
import type { SqlExecutor } from '../../../platform/events.ts';

export type CredentialChange = BroadcastTopics['credentials.changed'];

/** Inside the transaction that ends the credentials. */
export async function publishCredentialChange(tx: SqlExecutor, change: CredentialChange): Promise<void> {
  await publishBroadcast(tx, 'credentials.changed', change);
}

/**
 * After that transaction committed: this process's caches at once (the others hear the NOTIFY); resolves when the
 * change may be answered (a lease later: no cache anywhere serves the credential to a request that comes in after).
 */
export async function credentialChangeCommitted(change: CredentialChange): Promise<void> {
  announceLocally('credentials.changed', change);
  await afterCommitLease();
}
