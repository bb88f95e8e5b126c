# hookrelay's image: one static binary on distroless, run as a non-root user.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION: the release (docker build --build-arg VERSION=0.1.0); unset, the
# binary reports version.Release (docs/development.md#releasing).
ARG VERSION=
RUN CGO_ENABLED=0 go build -ldflags "-X github.com/hookrelay/hookrelay/version.stamped=${VERSION}" -o /hookrelay ./cmd/hookrelay

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /hookrelay /hookrelay
USER nonroot:nonroot
ENTRYPOINT ["/hookrelay"]
