// Prints a new operator key (`top_` + 32 random bytes, base64url) to put in TESSERA_OPERATOR_KEY: the install's
// bootstrap operator key. Nothing is stored: the key lives in the configuration, and with it the operator makes
// named keys through the admin API (POST /admin/api/v1/operator-keys). `--env` prints `TESSERA_OPERATOR_KEY=...`.
import { randomToken } from '../platform/crypto.ts';

const key = randomToken('top_');
process.stdout.write(process.argv.includes('--env') ? `TESSERA_OPERATOR_KEY=${key}\n` : `${key}\n`);
