// Done means replaced: one member down at a time, and each check of a removed member's replacement.
export * from './replacement-check.ts';
export * from './replacement.ts';
