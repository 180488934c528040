// Lint: typescript-eslint's recommended rules, type-aware where it catches real bugs (promises left
// floating or misused), for the code and the tests alike.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'deploy/offline/npm-cache/', 'shared/tensor/wasm/modules.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // One job per file and per function in the product's code: no file over 320 lines, no function over 60.
  {
    files: ['shared/**/*.ts', 'coordinator/**/*.ts', 'rank/**/*.ts', 'cli/**/*.ts', 'simulator/**/*.ts', 'bench/**/*.ts'],
    ignores: ['shared/tensor/wasm/modules.generated.ts'],
    rules: {
      'max-lines': ['error', { max: 320 }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  { files: ['scripts/**/*.mjs'], languageOptions: { globals: { Buffer: 'readonly', console: 'readonly', process: 'readonly' } } },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
    },
  },
);
