# zerowire: one image for the coordinator and the ranks.
#
# Ordinary build (Docker that reaches a registry):
#   docker build -t zerowire .
# Offline build (no registry; see deploy/offline/README.md):
#   deploy/offline/prepare.sh      # makes zerowire-base:node24 and deploy/offline/npm-cache from this machine
#   docker build -t zerowire --build-arg NODE_IMAGE=zerowire-base:node24 --build-arg BLAS_PACKAGE= \
#     --build-arg NPM_FLAGS="--offline --cache /src/deploy/offline/npm-cache" .
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
ARG NPM_FLAGS=""
WORKDIR /src
COPY package.json package-lock.json ./
# Offline builds bring their npm cache in the build context; for ordinary builds this folder holds a README.
COPY deploy/offline/ deploy/offline/
# --ignore-scripts: the `node` devDependency would download a second Node binary; the image has its own.
RUN npm ci --ignore-scripts --no-audit --no-fund ${NPM_FLAGS}
COPY tsconfig.json ./
COPY scripts/ scripts/
COPY shared/ shared/
COPY coordinator/ coordinator/
COPY rank/ rank/
COPY simulator/ simulator/
COPY cli/ cli/
COPY bench/ bench/
RUN node scripts/assemble-wasm.mjs \
 && node -e "require('fs').mkdirSync('/empty')" \
 && node node_modules/typescript/bin/tsc -p tsconfig.json \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund ${NPM_FLAGS}

FROM ${NODE_IMAGE}
# OpenBLAS computes the products (shared/tensor/blas.ts). An offline build, which has no package mirror,
# passes BLAS_PACKAGE="" and its image runs them on the WebAssembly kernels (the report says which).
ARG BLAS_PACKAGE=libopenblas0-pthread
RUN if [ -n "$BLAS_PACKAGE" ]; then apt-get update && apt-get install -y --no-install-recommends "$BLAS_PACKAGE" && rm -rf /var/lib/apt/lists/*; fi
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules/ node_modules/
COPY --from=build /src/dist/ dist/
# uid 1000 is the `node` user of the official images (and of the offline base image). /results belongs to it,
# so that a fresh named volume mounted there (deploy/stack.yml) is writable by the coordinator (made by
# copying an empty folder: the offline base image has no mkdir).
COPY --from=build --chown=1000:1000 /empty/ /results/
USER 1000:1000
EXPOSE 7070
ENTRYPOINT ["node", "/app/dist/cli/zerowire.js"]
CMD ["--help"]
