// npm run schema:check — fails when schema/supergraph.graphql is not what supergraph.yaml composes to,
// or when the composed schema breaks clients of the committed one (unless the change is allowlisted).
// `--against <file>` compares with another previous supergraph instead of the committed one.
import fs from 'node:fs';
import { checkSchema } from '../router/schema-check.ts';

const againstIdx = process.argv.indexOf('--against');
const previous = againstIdx > 0 ? fs.readFileSync(process.argv[againstIdx + 1]!, 'utf8') : undefined;
const result = checkSchema({ previous });
for (const line of result.messages) console.log(line);
process.exit(result.ok ? 0 : 1);
