// The house's import rules, stated by path (README "Layout"). `npm run lint:layers` checks them;
// `npm test` runs it. Each rule names the folder it speaks for, so a new folder inherits the rule
// of the layer it sits in and cannot change another's meaning.
const handlers = '(intake|probe-members|move-leader|schedule-retry|remediate|step-failed)';
const capability = '^functions/(core|app)/([^/]+)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-is-pure',
      comment: 'core holds every rule, pure: it imports only core and zod',
      severity: 'error',
      from: { path: '^functions/core/' },
      to: { pathNot: ['^functions/core/', '^node_modules/zod/'] },
    },
    {
      name: 'ports-are-interfaces',
      comment: 'ports hold interfaces over core and the event catalogue only',
      severity: 'error',
      from: { path: '^functions/ports/' },
      to: { pathNot: ['^functions/(core|ports)/', '^events/', '^node_modules/zod/'] },
    },
    {
      name: 'app-over-ports',
      comment: "the application works over core and the ports (and lib's utilities and Node's own modules), never an adapter, an edge or a package",
      severity: 'error',
      from: { path: '^functions/app/' },
      to: { pathNot: ['^functions/(core|ports|app|lib)/', '^events/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'adapters-serve-ports',
      comment: 'adapters implement ports over core; they never import the application or an edge',
      severity: 'error',
      from: { path: '^functions/adapters/' },
      to: { path: [`^functions/(app|lambda|aws-wiring|${handlers.slice(1, -1)})/`, '^infra/'] },
    },
    {
      name: 'adapter-through-face',
      comment:
        "one outside system's adapter reaches another's only through that one's index.ts, or kube's lazy face kube-on-demand.ts (it loads the Kubernetes client on first need)",
      severity: 'error',
      from: { path: '^functions/adapters/([^/]+)/' },
      to: { path: '^functions/adapters/([^/]+)/(?!(index|kube-on-demand)\\.ts$)', pathNot: '^functions/adapters/$1/' },
    },
    {
      name: 'lib-imports-nothing-of-ours',
      comment: 'lib holds utilities that import nothing of ours',
      severity: 'error',
      from: { path: '^functions/lib/' },
      to: { path: '^(functions|events|infra)/', pathNot: '^functions/lib/' },
    },
    {
      name: 'lambda-over-app',
      comment: "the handlers' commons sit over the application; adapters are chosen in aws-wiring",
      severity: 'error',
      from: { path: '^functions/lambda/' },
      to: { path: ['^functions/(adapters|aws-wiring)/', '^infra/'] },
    },
    {
      name: 'functions-not-infra',
      comment: 'nothing under functions/ imports infra/: infra composes functions, not the other way',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^infra/' },
    },
    {
      name: 'events-read-core',
      comment: 'the event catalogue reads core only',
      severity: 'error',
      from: { path: '^events/' },
      to: { path: ['^functions/', '^infra/'], pathNot: '^functions/core/' },
    },
    {
      name: 'capability-through-face',
      comment: "a capability reaches another only through that one's index.ts",
      severity: 'error',
      from: { path: capability },
      to: { path: `${capability}(?!index\\.ts$)`, pathNot: '^functions/$1/$2/' },
    },
    {
      name: 'outside-through-face',
      comment: 'every other folder reaches a capability through its index.ts (tests may look inside)',
      severity: 'error',
      from: { pathNot: ['^functions/(core|app)/', '^test/'] },
      to: { path: `${capability}(?!index\\.ts$)` },
    },
    {
      name: 'no-cycles',
      comment: 'no module loads itself back at run time, so a face never hands out a half-evaluated module (a type-only import is erased)',
      severity: 'error',
      from: { path: '^(functions|events)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
