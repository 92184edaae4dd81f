// Probing a cluster and scraping its members.
export * from './probe-cluster.ts';
export * from './scrape-members.ts';
