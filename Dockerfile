# The vppsvc node agent's image: `make image` builds it (docs/cli.md, "run").
#
# Stage 1 compiles a static binary (CGO_ENABLED=0: no libc to match on the
# node); stage 2 is distroless/static, which holds that binary, CA
# certificates and tzdata, and no shell or package manager. The agent runs as
# root, the image's default: VPP's API socket (/run/vpp/api.sock) is
# root-owned unless startup.conf says otherwise, and the agent needs nothing
# else from the node. docs/deploy/daemonset.yaml runs it with host networking
# and the socket's directory mounted.
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Dependencies first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/vppsvc ./cmd/vppsvc

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/vppsvc /usr/local/bin/vppsvc
ENTRYPOINT ["/usr/local/bin/vppsvc"]
CMD ["--help"]
