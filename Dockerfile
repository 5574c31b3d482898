# Mnemo container image. Not built or run on the machine where it was written (no Docker engine
# there): see README, "Containers". The TypeScript is compiled in a build stage; the image runs
# `node dist/src/cli/main.js` itself, as `npm start` does.

# ---- dependencies: a layer rebuilt only when package.json or the lockfile changes
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- build: compile the TypeScript (dev dependencies only here)
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY rest ./rest
COPY jobs ./jobs
COPY mcp ./mcp
COPY console ./console
RUN npm run build

# ---- runtime
FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    MNEMO_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY --from=build /app/dist ./dist
COPY sql ./sql
# The embedded database (when DATABASE_URL is unset) lives in /data, owned by the non-root user.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# /readyz: database reachable and migrated. A worker-only container has no API port, so this check
# fails there: compose.yaml gives it its own on MNEMO_METRICS_PORT's /healthz; with `docker run`,
# pass --health-cmd (or --no-healthcheck).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node directly (no npm wrapper), so SIGTERM reaches the process and shutdown is graceful.
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["serve"]
