// `npm ci` (its prepare script) links zerowire's own command into node_modules/.bin, so that `npx zerowire`
// finds it in this checkout. npx would otherwise look for it in the project's package tree, which the `node`
// devDependency's own install step leaves unreadable to it on a fresh clone (a nested install the lockfile
// does not list), and then fail with "zerowire: command not found".
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';

const bin = fileURLToPath(new URL('../node_modules/.bin/', import.meta.url));
mkdirSync(bin, { recursive: true });
rmSync(`${bin}zerowire`, { force: true });
symlinkSync('../../dist/cli/zerowire.js', `${bin}zerowire`);
