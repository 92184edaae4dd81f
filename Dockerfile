# The image infra/kubernetes/deploy/deployment.yaml runs: the etcd-remediator command line
# (bin/etcd-remediator.mjs, the package's bin) on Node 24, which runs the TypeScript sources as they
# are (type stripping), with the production dependencies alone, as uid:gid 65532:65532.
# Build from the repository root:
#
#   docker build -t ghcr.io/example/etcd-remediator:0.1.0 .
#
# test/infra/image.test.ts holds this file to the Deployment (image, user, entrypoint) and runs
# the tree it builds without a container engine.

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no production dependency builds anything (protobufjs's postinstall only checks
# its own CLI's versions).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY events ./events
COPY functions ./functions
COPY infra/cli ./infra/cli
COPY infra/runtime ./infra/runtime
COPY infra/kubernetes ./infra/kubernetes
COPY infra/lab ./infra/lab
# Numeric, so the kubelet can check runAsNonRoot without reading /etc/passwd.
USER 65532:65532
ENTRYPOINT ["node", "bin/etcd-remediator.mjs"]
CMD ["--help"]
