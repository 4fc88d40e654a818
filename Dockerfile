# The toolgate image: the binary, stamped with its version, in a small Debian runtime, run as
# a numeric non-root user. Built by `docker compose up --build` and for deploy/helm/toolgate:
#   docker build -t toolgate:0.9.0 --build-arg VERSION=0.9.0 \
#     --build-arg COMMIT=$(git rev-parse --short=12 HEAD) .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# .git is not in the build context (.dockerignore), so the version, commit and date come as
# build args; without them the binary reports the VERSION file's version and the build's
# date, and no commit (scripts/ldflags.sh).
ARG VERSION
ARG COMMIT
ARG BUILD_DATE
RUN make toolgate BIN=/out GOLDFLAGS="-s -w"

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/toolgate /usr/local/bin/toolgate
# Numeric, so that Kubernetes' runAsNonRoot can check it without reading /etc/passwd; the
# Helm chart (deploy/helm/toolgate) runs its containers as the same user and group.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["toolgate"]
CMD ["serve"]
