import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      '.tmp/',
      'bench/results.json',
      '**/*.mjs',
      '**/*.cjs',
      '**/*.js',
      'vitest.config.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-console': 'error',
      '@typescript-eslint/require-await': 'off',
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    // $HOME is read in one place, paths.ts, so NIFFLER_HOME and tests' HOME always win.
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    ignores: ['src/main/paths.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='homedir']",
          message: 'use nifflerHome() or the env HOME through src/main/paths.ts',
        },
        {
          selector: "ImportSpecifier[imported.name='homedir']",
          message: 'use nifflerHome() or the env HOME through src/main/paths.ts',
        },
        {
          selector:
            "CallExpression[callee.property.name='addEventListener'][arguments.0.value='abort']",
          message:
            'use whenAborted() from src/workers/shared/abort.ts: it also fires for a signal that aborted already',
        },
      ],
    },
  },
  {
    files: ['src/main/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/ui/**', 'ink', 'ink-*', 'react'],
              message: 'main never imports the UI or Ink',
            },
            {
              group: ['**/workers/*/**', '!**/workers/protocol/**', '!**/workers/shared/**'],
              message: 'main imports only workers/protocol and workers/shared',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/workers/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/main/**', '**/ui/**', 'ink', 'react'],
              message: 'workers import only workers/protocol and workers/shared',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/ui/render/**', 'test/**', 'bench/**', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
);
