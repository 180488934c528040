// `npm ci` (its prepare script) links zerowire's own command into node_modules/.bin, so that `npx zerowire`
// in this checkout runs this checkout's build and installs nothing. package.json has no "bin" on purpose:
// npm exec, given a command that the project's own package.json names as its bin, installs the project
// into ~/.npm/_npx/<hash> to link it (libnpmexec, "self-execution of a local bin"), which builds it again
// there, and a first run interrupted mid-install left that folder empty and every later `npx zerowire` in
// the checkout failing until it was deleted by hand. Without it, npx finds this link and runs it.
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';

const bin = fileURLToPath(new URL('../node_modules/.bin/', import.meta.url));
mkdirSync(bin, { recursive: true });
rmSync(`${bin}zerowire`, { force: true });
symlinkSync('../../dist/cli/zerowire.js', `${bin}zerowire`);
