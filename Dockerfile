# syntax=docker/dockerfile:1
#
# edgesync: the reconciliation daemon (`edgesync run`) as a container image.
#
#   docker build -t edgesync .
#   docker run --rm -v "$PWD/edges:/manifests:ro" \
#     -e EDGESYNC_API_URL=https://api.example.com -e EDGESYNC_API_KEY -p 9090:9090 edgesync
#
# (the owner id is edges/.edgesync-owner, the file `edgesync import` writes)
#
# Two stages: the build stage bundles the CLI from its TypeScript sources with the dev dependencies;
# the runtime stage holds only the production dependencies and the bundle, and runs as a non-root
# user.

# The current Active LTS line of Node.js (26 since 2026-10-28); the code itself supports >= 20.19.
ARG NODE_IMAGE=node:26-alpine

# --- build -------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first, in their own layer: source edits do not reinstall them. `prepare` (the build)
# needs the sources, so scripts are skipped here and the bundle is made explicitly below.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
# The bundle alone (esbuild strips the types): type checking is the CI's job, not the image's.
RUN npm run bundle \
  # The JSON Schema is committed; make sure the runtime COPY below never fails without it.
  && mkdir -p schema

# --- runtime -----------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; --ignore-scripts also skips `prepare` (no compiler here).
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/bin ./bin
# The bundled CLI (scripts/bundle.mjs) is all bin/edgesync.js loads of dist/.
COPY --from=build /app/dist/bundle ./dist/bundle
COPY --from=build /app/schema ./schema
# The working directory is where the embedded local API keeps `.edgesync/` state when no API URL
# is configured; it is the only place the process writes, so it can be a volume.
RUN mkdir -p /var/lib/edgesync && chown 1000:1000 /var/lib/edgesync
WORKDIR /var/lib/edgesync
# The image's `node` user, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000

EXPOSE 9090
# No curl in the image: Node's own fetch probes the daemon's liveness endpoint.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9090/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["node", "--expose-gc", "--heap-growing-percent=25", "--max-semi-space-size=8", "/app/bin/edgesync.js", "run"]
# Inside a container the daemon must listen beyond loopback for probes and Prometheus. When you
# override these arguments, keep `--listen 0.0.0.0:9090` (the HEALTHCHECK expects port 9090).
# On that address POST /-/suspend, /-/resume and /-/reconcile are off; the admin listener serves
# them inside the container only (a sidecar's webhook, `docker exec ... wget`). To serve them on
# 9090 instead, pass a token: -e EDGESYNC_CONTROL_TOKEN (clients send "Authorization: Bearer").
# A real API also needs the owner id: .edgesync-owner in /manifests (or -e EDGESYNC_OWNER=...).
CMD ["/manifests", "--listen", "0.0.0.0:9090", "--admin-listen", "127.0.0.1:9091"]
