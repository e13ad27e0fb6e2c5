// npm run schema:compose — recomposes supergraph.yaml and writes schema/supergraph.graphql.
import fs from 'node:fs';
import { composeSupergraph, readSupergraphConfig, SUPERGRAPH_FILE } from '../router/compose.ts';

const sdl = composeSupergraph(readSupergraphConfig());
fs.writeFileSync(SUPERGRAPH_FILE, sdl.endsWith('\n') ? sdl : `${sdl}\n`);
console.log(`wrote ${SUPERGRAPH_FILE}`);
