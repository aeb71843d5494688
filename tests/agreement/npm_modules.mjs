// Loads the pinned reference packages from tools/npm/node_modules (installed by `npm ci`, see
// npm_setup.sh), wherever the test runs from.
import fs from 'node:fs';
import { createRequire } from 'node:module';

const npmDir = new URL('../../tools/npm/', import.meta.url);
const require = createRequire(new URL('package.json', npmDir));

export function hfTokenizers() {
  return require('@anush008/tokenizers');
}

export function hfJinja() {
  return require('@huggingface/jinja');
}

// The installed version of a package, for the log (what was compared against). Read from the file:
// packages with an "exports" map do not export their package.json.
export function packageVersion(name) {
  return JSON.parse(fs.readFileSync(new URL(`node_modules/${name}/package.json`, npmDir), 'utf8')).version;
}
