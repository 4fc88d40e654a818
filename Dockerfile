# Builds the toolgate binary into a small runtime image.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/toolgate ./cmd/toolgate

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/toolgate /usr/local/bin/toolgate
USER nobody
EXPOSE 8080
ENTRYPOINT ["toolgate"]
CMD ["serve"]
