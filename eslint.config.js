// Lint rules beyond what `tsc --strict` and Prettier check: `npm run lint`, run by .ci/run.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// A later block's no-restricted-syntax replaces an earlier one's for the same files, so the block
// that also bans plain Errors repeats this entry.
const NO_RAW_REBOUND_ERROR = {
  selector: "NewExpression[callee.name='ReboundError']",
  message:
    'Throw a typed subclass from @rebound/core (ConfigError, IllegalStateError, …) or withContext(err, message), not a raw ReboundError.',
};

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      'packages/core/src/generated/**',
      '**/dist/**',
      'bench/results/**',
      '.rebound/**',
      '.rebound-demo/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    rules: {
      // A leading underscore marks a parameter an interface requires and this implementation ignores.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // vitest passes fixtures as the first argument of hooks and tests: `afterAll(async ({}, suite) => …)`.
    files: ['**/*.test.ts', 'test/**/*.ts'],
    // Terminal and log layouts are asserted exactly, literal runs of spaces included.
    rules: { 'no-empty-pattern': 'off', 'no-regex-spaces': 'off' },
  },
  {
    // Throw sites name their condition with a typed subclass (packages/core/src/errors.ts); a raw
    // ReboundError is built only there (fromServiceError, withContext).
    files: ['packages/*/src/**/*.ts'],
    ignores: ['packages/core/src/errors.ts'],
    rules: {
      'no-restricted-syntax': ['error', NO_RAW_REBOUND_ERROR],
    },
  },
  {
    // Converted packages build no plain Error either: an error without a code reaches the CLI
    // and the REST API as INTERNAL. Tests and test helpers (testing/) may.
    files: ['packages/{core,cli,jobmaster,taskmanager,api,partition,shuffle-worker,example-support}/src/**/*.ts'],
    ignores: ['packages/core/src/errors.ts', '**/*.test.ts', '**/*.test-util.ts', '**/testing/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        NO_RAW_REBOUND_ERROR,
        {
          selector: 'NewExpression[callee.name=/^(Error|TypeError|RangeError)$/]',
          message: 'Throw a ReboundError subclass with a stable code (packages/core/src/errors.ts), not a plain Error.',
        },
      ],
    },
  },
  {
    // CommonJS: dependency-cruiser reads its configuration with require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The dashboard's browser code.
    files: ['packages/dashboard/app/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
