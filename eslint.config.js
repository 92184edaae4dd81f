// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The folders of the six functions' handlers: an edge, as aws-wiring is. */
const handlerFolders = ['intake', 'probe-members', 'move-leader', 'schedule-retry', 'remediate', 'step-failed'];

/**
 * One no-restricted-imports block per layer. `climbs`: no relative import may leave the folder;
 * `into`: a relative import that leaves it may only go into these folders; `forbid`: these
 * folders are refused; `only`: the packages allowed (every other bare import is refused). A
 * file takes one block's options only (a later block would replace an earlier one's), so the
 * rule of an enclosing folder (functions/**) is added to each layer inside it, and its own
 * block leaves those layers out.
 */
function layers(rules) {
  const globs = Object.keys(rules);
  const inside = (inner, outer) => inner !== outer && inner.startsWith(outer.slice(0, -2));
  const patternsOf = (rule) => {
    const message = `layer rule: ${rule.why}`;
    return [
      ...(rule.climbs ? [{ regex: '^\\.\\./', message }] : []),
      ...(rule.into ? [{ regex: `^(\\.\\./)+(?!(${rule.into.join('|')})/)[^./]`, message }] : []),
      ...(rule.forbid ? [{ regex: `^(\\.\\./)+(${rule.forbid.join('|')})/`, message }] : []),
      ...(rule.only ? [{ regex: `^(?!\\.|(${rule.only.join('|')})$)`, message }] : []),
    ];
  };
  return globs.map((glob) => {
    const enclosing = globs.filter((outer) => inside(glob, outer));
    const inner = globs.filter((other) => inside(other, glob));
    const patterns = [rules[glob], ...enclosing.map((outer) => rules[outer])].flatMap(patternsOf);
    return {
      files: [`${glob}/*.ts`],
      ...(inner.length > 0 ? { ignores: inner.map((g) => `${g}/*.ts`) } : {}),
      rules: { 'no-restricted-imports': ['error', { patterns }] },
    };
  });
}

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'dist/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // Type-aware rules read the project's own tsconfig, so a promise nobody awaits is an error.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Port implementations are async to match their interface, whether or not they await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  // The layers (README "Layout"): each may import only what is beneath it, so a rule never
  // reaches for I/O and an adapter never for the application it serves. Import paths are
  // relative, and each folder name below is used once in the tree, so the patterns match the
  // folder a path climbs into however deep the importer sits.
  ...layers({
    'functions/core/**': { climbs: 'core', only: ['zod'], why: 'core is pure: it imports only core and zod' },
    'functions/ports/**': { into: ['core', 'events'], why: 'ports hold interfaces over core and the event catalogue only' },
    'functions/app/**': {
      into: ['core', 'ports', 'lib', 'events'],
      why: "the application works over core and the ports (and lib's utilities), never an adapter or an edge",
    },
    'functions/adapters/**': {
      forbid: ['app', 'lambda', 'aws-wiring', 'infra', ...handlerFolders],
      why: 'adapters implement ports over core; they never import the application or an edge',
    },
    'functions/lib/**': { climbs: 'lib', why: 'lib holds utilities that import nothing of ours' },
    'functions/lambda/**': {
      forbid: ['adapters', 'aws-wiring', 'infra'],
      why: "the handlers' commons sit over the application; adapters are chosen in aws-wiring",
    },
    'functions/**': { forbid: ['infra'], why: 'nothing under functions/ imports infra/: infra composes functions, not the other way' },
    'events/**': {
      forbid: ['functions/app', 'functions/ports', 'functions/adapters', 'functions/lambda', 'functions/aws-wiring', 'infra'],
      why: 'the event catalogue reads core only',
    },
  }),
  {
    // vitest's asymmetric matchers (expect.any, expect.stringMatching) are typed `any`.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    // The config files are plain JavaScript outside the TypeScript project.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
