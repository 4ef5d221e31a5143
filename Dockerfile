# syntax=docker/dockerfile:1
# codecall as a container: `codecall serve --http` by default, `codecall worker` with another
# command. Build: docker build -t codecall .   Run: see compose.yaml and docs/deploy.md.

ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: compile dist/ with the full dev toolchain ---
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
RUN npm rebuild isolated-vm esbuild && npm run build

# --- deps: production dependencies only, plus the optional job backends the image serves ---
FROM ${NODE_IMAGE} AS deps
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: "prepare" would build from sources this stage does not have; the two
# packages with native or platform parts are rebuilt explicitly.
RUN npm ci --omit=dev --ignore-scripts \
  && npm rebuild isolated-vm esbuild \
  && npm install --no-save --omit=dev --ignore-scripts $(node -p "const p = require('./package.json').peerDependencies; ['bullmq', 'ioredis', 'pg', 'pg-boss', '@bull-board/api', '@bull-board/express'].map((n) => n + '@' + p[n]).join(' ')")

# --- runtime ---
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    CODECALL_HISTORY_PATH=/data/history.sqlite \
    CODECALL_STATE_DIR=/data/state
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
COPY --from=build /src/examples ./examples
COPY --from=build /src/deploy ./deploy
RUN ln -s /app/bin/codecall.js /usr/local/bin/codecall \
  && mkdir -p /data /config \
  && chown node:node /data
# Never root: the sandbox runs model-written code, and MCP servers run with this user's rights.
USER node
WORKDIR /data
VOLUME ["/data"]
EXPOSE 3737
# `serve --http` is healthy while its port answers HTTP; any other command (worker) while it runs.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "/app/deploy/healthcheck.mjs"]
ENTRYPOINT ["codecall"]
# Binding 0.0.0.0 needs a token: set CODECALL_SERVE_TOKEN. Mount your configuration at
# /config/codecall.json (read-only is fine: history and state go to /data).
CMD ["serve", "--http", "--host", "0.0.0.0", "--port", "3737", "--config", "/config/codecall.json"]
