# The one ocm-controller image: `ocm-controller hub` on the hub and
# `ocm-controller agent` on managed clusters.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.0.0-dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/kubectl-ocm/kubectl-ocm/pkg/version.Version=${VERSION}" \
      -o /out/ocm-controller ./controllers/cmd/ocm-controller

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/ocm-controller /ocm-controller
USER 65532:65532
ENTRYPOINT ["/ocm-controller"]
