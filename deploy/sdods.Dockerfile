# Container image of the test automation server (sdods): the static binary, Chromium for browser
# steps and git for Git integrations, run as a non-root user. One image serves every role:
#   sdods serve --role api      HTTP API and live events, executes no run
#   sdods serve --role worker   executes runs
#   sdods serve --role all      both (a single process)
# Build from the repository root:
#   docker build -f deploy/sdods.Dockerfile -t sdods/sdods .
# `make image-binary` builds the binary with the same command, and deploy/deploy_test.go builds it,
# checks it is static and serves /api/health with it as the image's user. See docs/deploy.md.

FROM golang:1.26-bookworm AS build
ENV GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
WORKDIR /src
COPY go.mod go.sum ./
COPY engine/go.mod engine/
RUN go mod download
COPY . .
# build: the one command the image, `make image-binary` and deploy_test.go share.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sdods ./cmd/sdods

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation git ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 sdods \
 && useradd --uid 65532 --gid 65532 --home-dir /data --no-create-home --shell /usr/sbin/nologin sdods \
 && mkdir -p /data && chown 65532:65532 /data
COPY --from=build /out/sdods /usr/local/bin/sdods
# Nothing in the image runs as root.
USER 65532:65532
WORKDIR /data
ENV SDODS_ADDR=:8080 \
    SDODS_DATA_DIR=/data \
    SDODS_CHROMIUM=/usr/bin/chromium \
    SDODS_LOG_FORMAT=json
EXPOSE 8080
# Health: GET /api/health is 200 while the server and its database answer (the Kubernetes probes).
ENTRYPOINT ["/usr/local/bin/sdods"]
CMD ["serve"]
