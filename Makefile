# kubectl-ocm build, test and development environment.
#
#   make build       build bin/kubectl-ocm, bin/ocm-controller and the example add-ons' bin/helloworld-addon and bin/hellomanager, with bin/kubectl_complete-ocm
#   make image       build the ocm-controller image (linux/amd64, linux/arm64) into dist/image, no container daemon needed
#   make test        build everything the tests need and run every test tier
#   make dev-env     start a local hub, cluster1, cluster2 and a standby hub hub2 in the background
#   make verify      formatting, vet, lint, code patterns, layering, generated files, go mod tidy, docs (links and commands)
#   make release VERSION=vX.Y.Z   release archives, checksums, the krew manifest (checked with krew), chart versions and the image

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := build

GO        ?= go
# The main module needs Go 1.27.3 (its go line); with GOTOOLCHAIN=auto an
# older go command fetches that toolchain from the module proxy, and each
# module builds with the Go its own go line asks for.
export GOTOOLCHAIN := auto
ROOT      := $(abspath .)
BIN       := $(ROOT)/bin
TOOLS_BIN := $(BIN)/tools
KUBE_BIN  := $(BIN)/kube
MCP_INSPECTOR_DIR := $(TOOLS_BIN)/mcp-inspector
MODULE    := github.com/kubectl-ocm/kubectl-ocm

VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
GIT_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS     = -s -w \
	-X $(MODULE)/pkg/version.Version=$(VERSION) \
	-X $(MODULE)/pkg/version.GitCommit=$(GIT_COMMIT) \
	-X $(MODULE)/pkg/version.BuildDate=$(BUILD_DATE)

CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION  ?= v2.15.0
ACTIONLINT_VERSION     ?= v1.7.12
CONTROLLER_GEN := $(TOOLS_BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
# golangci-lint must be built with a Go at least as new as the module's go
# line (GO_TOOLCHAIN); its name carries both versions.
GO_TOOLCHAIN   := $(shell sed -n 's/^go //p' go.mod)
GOLANGCI_LINT  := $(TOOLS_BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)-go$(GO_TOOLCHAIN)
ACTIONLINT     := $(TOOLS_BIN)/actionlint-$(ACTIONLINT_VERSION)

# Test settings. GOFLAGS_TEST can add e.g. -run or -v. TEST_TIMEOUT bounds
# one package: the end-to-end package, which starts a fleet with real nodes
# per test, takes about 22 minutes on 2 cores beside the integration
# packages, and near an hour on a slower machine of the same size (make test
# took 64 min there, docs/development.md); the bound catches a hang, not a
# slow machine.
TEST_TIMEOUT ?= 70m
# TEST_P is how many test packages run at once (go test -p), and
# TEST_PARALLEL how many tests of one package that start environments of
# their own (t.Parallel) run at once (go test -parallel; test/e2e admits its
# fleets in their declared order under that limit). make test keeps
# both cores busy (1.7 of 2 on average, docs/development.md "make test's
# CPU"), so more at once does not shorten it: the end-to-end package at 3
# took as long (30 min 15 s) at a load average up to 71, and fault tests
# then missed their deadlines.
TEST_P        ?= 4
TEST_PARALLEL ?= 2
# TEST_FIRST lists the packages that take longest, longest first: the go
# command starts packages in the order they are named, so naming these before
# ./... starts them at once instead of after the short packages, and the
# end-to-end package (nearly all of make test's minutes) starts first. Every
# integration package of about 90 s or more is named: test/integration/work,
# started last by its name, had run 138 s alone at the end of make test.
# Keep it in step with the tiers' times in docs/development.md.
# TEST_TIMES is where make test writes every test's time, longest first
# (hack/testreport reads go test -json and prints the slowest at the end).
TEST_TIMES    ?= $(ROOT)/_output/test-times.tsv
# TEST_JSON keeps the whole go test -json stream of the last make test: every
# line each test logged, with its time, to see where a slow test waits.
TEST_JSON     ?= $(ROOT)/_output/test.json
TEST_FIRST    ?= ./test/e2e ./test/integration/registration/agent ./test/framework ./test/integration/operator/hub ./test/integration/proxy \
	./test/integration/registration/hub ./test/integration/work ./test/integration/replicaset ./test/integration/operator/klusterlet \
	./test/integration/completion ./test/integration/podcauses ./test/integration/placement ./test/integration/importer
export KUBE_BIN_DIR := $(KUBE_BIN)
export OCM_MCP_INSPECTOR := $(MCP_INSPECTOR_DIR)/mcp-inspector

# RACE=1 builds the binaries with the race detector (which needs cgo).
ifeq ($(RACE),1)
BUILD_ENV   := CGO_ENABLED=1
BUILD_FLAGS := -race
else
BUILD_ENV   := CGO_ENABLED=0
BUILD_FLAGS :=
endif
# TEST_ENV is the environment of make test and go vet: without cgo, as the
# product's binaries are built, so that go vet, make build and make test
# share one compilation of every package, and each test binary is linked by
# the go linker alone (a link takes about half the CPU it takes with cgo).
# The race detector needs cgo: make test-race and test-race-unit keep it.
# GOGC and GOMEMLIMIT reach the go command, the test binaries and, through
# test/framework, the control planes and nodes they start (not the Pods):
# the machine has memory to spare and the tests are short of CPU, so the
# collector runs a quarter as often (test/integration/conversion: 46.8
# CPU-seconds instead of 55.2), each process soft-capped at 2 GiB.
TEST_GOGC       ?= 400
TEST_GOMEMLIMIT ?= 2GiB
TEST_ENV    := CGO_ENABLED=0 GOGC=$(TEST_GOGC) GOMEMLIMIT=$(TEST_GOMEMLIMIT)
# TEST_LDFLAGS links the test binaries without DWARF debug information and
# without the ELF symbol table, which nothing in make test reads (a panic's
# stack trace comes from the Go runtime's own tables, which stay): a test
# binary links in about a third less CPU (test/integration/work: 7.2
# CPU-seconds with both, 5.8 without DWARF, 4.1 without either), and make
# test and test-race-unit link one per package.
TEST_LDFLAGS := -s -w
# RACE_LOG_DIR receives the race reports of make test-race (GORACE log_path).
RACE_LOG_DIR := $(ROOT)/_output/race

##@ Build

.PHONY: build
build: ## Build static (CGO_ENABLED=0) bin/kubectl-ocm, bin/ocm-controller, the example add-ons' agent bin/helloworld-addon and manager bin/hellomanager; copy the completion script kubectl_complete-ocm beside them. RACE=1 builds them with the race detector instead.
	$(BUILD_ENV) $(GO) build $(BUILD_FLAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-ocm ./plugins/kubectl-ocm
	$(BUILD_ENV) $(GO) build $(BUILD_FLAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ocm-controller ./controllers/cmd/ocm-controller
	$(BUILD_ENV) $(GO) build $(BUILD_FLAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/helloworld-addon ./examples/addons/helloworld/agent
	$(BUILD_ENV) $(GO) build $(BUILD_FLAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/hellomanager ./examples/addons/hellomanager
	install -m 0755 kubectl_complete-ocm $(BIN)/kubectl_complete-ocm

# Where `go install` puts kubectl-ocm: GOBIN, else the first GOPATH entry's bin.
INSTALL_DIR = $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)

.PHONY: install
install: build ## Install the static kubectl-ocm (as make build builds it) and kubectl_complete-ocm into GOBIN (or GOPATH/bin): kubectl finds the plugin and its completion there.
	$(BUILD_ENV) $(GO) install $(BUILD_FLAGS) -trimpath -ldflags '$(LDFLAGS)' ./plugins/kubectl-ocm
	install -m 0755 kubectl_complete-ocm $(INSTALL_DIR)/kubectl_complete-ocm

# The ocm-controller image. Its creation time, its files' times and the build
# date stamped in it come from SOURCE_DATE_EPOCH (default: the commit's time),
# so the same commit gives the same image. REGISTRY is the registry and
# organization image-push pushes to (<REGISTRY>/ocm-controller:<version>) and
# the archive for kind is tagged in (default quay.io/kubectl-ocm), as
# --image-registry of `hub init` and `join`.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_DIR         ?= $(ROOT)/dist/image
IMAGE_PLATFORMS   ?= linux/amd64,linux/arm64
IMAGE_ARGS         = --out $(IMAGE_DIR) --version $(VERSION) $(if $(REGISTRY),--registry $(REGISTRY))

.PHONY: image
image: BUILD_DATE = $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
image: ## Build the ocm-controller image for IMAGE_PLATFORMS without Docker: an OCI layout in dist/image/layout and, for this machine's architecture, an archive for kind or docker load.
	$(GO) run ./hack/image build $(IMAGE_ARGS) --platforms $(IMAGE_PLATFORMS) \
		--revision $(GIT_COMMIT) --source-date-epoch $(SOURCE_DATE_EPOCH) --ldflags '$(LDFLAGS)'

# The images the local clusters' nodes run: ocm-controller for this machine
# only (make image for HOST_PLATFORM) and the sandbox's other images.
HOST_PLATFORM := linux/$(shell $(GO) env GOARCH)
SANDBOX_DIR   ?= $(ROOT)/dist/sandbox
export OCM_DIST_DIR := $(ROOT)/dist

.PHONY: sandbox-images
sandbox-images: ## Build the other images the local clusters' nodes run (pause, busybox from Debian's busybox-static, the example add-ons' images) into dist/sandbox/layout.
	$(GO) run ./hack/image sandbox --out $(SANDBOX_DIR) --ldflags '$(LDFLAGS)'

# UPGRADE_VERSION is the version of the second ocm-controller image, in
# dist/upgrade, that make demo and the upgrade tests move to.
UPGRADE_VERSION ?= $(VERSION)-upgrade
export OCM_UPGRADE_VERSION := $(UPGRADE_VERSION)

.PHONY: node-images
node-images: ## Build the ocm-controller image for this machine's platform (make image IMAGE_PLATFORMS=$(HOST_PLATFORM)), a second one stamped UPGRADE_VERSION into dist/upgrade, and the sandbox images.
	$(MAKE) image IMAGE_PLATFORMS=$(HOST_PLATFORM)
	$(MAKE) image IMAGE_PLATFORMS=$(HOST_PLATFORM) VERSION=$(UPGRADE_VERSION) IMAGE_DIR=$(ROOT)/dist/upgrade
	$(MAKE) sandbox-images

.PHONY: mcp-inspector
mcp-inspector: ## Install the MCP Inspector's CLI and the Node.js it needs from the npm registry into bin/tools/mcp-inspector (the MCP client of the end-to-end tests and the demo).
	hack/mcp-inspector.sh $(MCP_INSPECTOR_DIR)

.PHONY: node-deps
node-deps: ## Install the Debian packages the local clusters' nodes and their tests use when missing (runc, CNI plugins, iptables, busybox-static, openssl; needs root).
	hack/node-deps.sh

.PHONY: image-push
image-push: ## Push the image of dist/image as $(REGISTRY)/ocm-controller:<version>, with the credentials of docker login (builds it first).
	@if [ -z "$(REGISTRY)" ]; then echo "image-push needs REGISTRY, the registry and organization to push to: make image-push REGISTRY=quay.io/<org>" >&2; exit 1; fi
	$(MAKE) image
	$(GO) run ./hack/image push $(IMAGE_ARGS)

.PHONY: kube-bins
kube-bins: ## Build kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl, etcd, containerd and its runc shim, and the nodes' NetworkPolicy enforcer kube-network-policies into bin/kube (skipped when current), printing progress.
	hack/kube-bins.sh $(KUBE_BIN)

.PHONY: kube-bins-previous
kube-bins-previous: ## Build the previous Kubernetes release's kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy into bin/kube/previous (skipped when current); the tests that run that release build it themselves when they start.
	hack/kube-bins.sh --previous $(KUBE_BIN)

##@ Release

DIST ?= $(ROOT)/dist
# RELEASE_FLAGS adds flags of hack/release, e.g. -allow-dirty for a trial run
# or -platforms linux/amd64.
RELEASE_FLAGS ?=

# RELEASE_PARTS are the parts of a release, each a target of its own that
# reads VERSION; `make release` makes them all. Add a part here (for example
# an image target) to release it with the rest.
RELEASE_PARTS := release-archives image

.PHONY: release
release: $(RELEASE_PARTS) ## Make release VERSION=vX.Y.Z: every part in RELEASE_PARTS.

.PHONY: release-archives
release-archives: kube-bins ## Cross-build kubectl-ocm into dist/ (archives, checksums.txt), write krew-index/plugins/ocm.yaml and .krew.yaml, check them with krew's tools.
	$(GO) run ./hack/release -version '$(VERSION)' -dist $(DIST) -kubectl $(KUBE_BIN)/kubectl $(RELEASE_FLAGS)

##@ Code generation

# Roles generated from the +kubebuilder:rbac markers: each file under config/
# holds the ClusterRole (and the Role in the component's namespace) of one
# role name, made from the markers of the packages listed with it.
HUB_RBAC_FILE           := config/hub/10-hub-controller-role.yaml
HUB_RBAC_PATHS          := ./controllers/cmd/...;./controllers/registration/hub/...;./controllers/placement/...;./controllers/work/hub/...;./controllers/addon/hub/...;./controllers/proxy/hub/registrar/...
REGISTRATION_RBAC_FILE  := config/agent/10-registration-role.yaml
REGISTRATION_RBAC_PATHS := ./controllers/cmd/...;./controllers/registration/agent/...
WORK_RBAC_FILE          := config/agent/15-work-role.yaml
WORK_RBAC_PATHS         := ./controllers/work/agent/...
ADDON_RBAC_FILE         := config/agent/17-addon-role.yaml
ADDON_RBAC_PATHS        := ./controllers/addon/agent/...
TUNNEL_RBAC_FILE        := config/agent/19-hub-tunnel-role.yaml
TUNNEL_RBAC_PATHS       := ./controllers/proxy/agent/...
HUB_TUNNEL_RBAC_FILE    := config/hub/13-hub-tunnel-role.yaml
HUB_TUNNEL_RBAC_PATHS   := ./controllers/proxy/hub
IMPORTER_RBAC_FILE      := config/hub/12-importer-role.yaml
IMPORTER_RBAC_PATHS     := ./controllers/importer/...
# rbac-gen writes role $(1) to file $(2) from the markers of packages $(3).
rbac-gen = $(CONTROLLER_GEN) rbac:roleName=$(1),fileName=$(notdir $(2)),headerFile=hack/boilerplate.rbac.txt \
	'paths=$(3)' output:rbac:dir=$(dir $(2))

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy functions and CRDs from pkg/apis, the controllers' roles from their RBAC markers, and the Helm charts' templates from config/.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./pkg/apis/...
	rm -rf config/crd/bases && mkdir -p config/crd/bases
	$(CONTROLLER_GEN) crd:crdVersions=v1 paths=./pkg/apis/... output:crd:artifacts:config=config/crd/bases
	$(call rbac-gen,open-cluster-management:hub-controller,$(HUB_RBAC_FILE),$(HUB_RBAC_PATHS))
	$(call rbac-gen,open-cluster-management:klusterlet-agent:registration,$(REGISTRATION_RBAC_FILE),$(REGISTRATION_RBAC_PATHS))
	$(call rbac-gen,open-cluster-management:klusterlet-agent:work,$(WORK_RBAC_FILE),$(WORK_RBAC_PATHS))
	$(call rbac-gen,open-cluster-management:klusterlet-agent:addon,$(ADDON_RBAC_FILE),$(ADDON_RBAC_PATHS))
	$(call rbac-gen,open-cluster-management:klusterlet-agent:hub-tunnel,$(TUNNEL_RBAC_FILE),$(TUNNEL_RBAC_PATHS))
	$(call rbac-gen,open-cluster-management:importer,$(IMPORTER_RBAC_FILE),$(IMPORTER_RBAC_PATHS))
	$(call rbac-gen,open-cluster-management:hub-tunnel,$(HUB_TUNNEL_RBAC_FILE),$(HUB_TUNNEL_RBAC_PATHS))
	$(GO) run ./hack/chartgen
	@# Cluster API's Cluster CRD, from its types, for the test hubs that play Cluster API's part.
	tmp=$$(mktemp -d) && $(CONTROLLER_GEN) crd:crdVersions=v1 paths=sigs.k8s.io/cluster-api/api/core/v1beta2 output:crd:artifacts:config=$$tmp && \
		cp $$tmp/cluster.x-k8s.io_clusters.yaml test/framework/capi/ && rm -rf $$tmp

##@ Test

.PHONY: test
# The test targets leave go vet to make verify (-vet=off), which runs it on
# every package with all its checks.
test: build kube-bins node-deps node-images mcp-inspector ## Run every test: unit, framework, integration and end-to-end, and the Helm charts' test (module test/helm).
	@mkdir -p $(ROOT)/_output
	$(TEST_ENV) $(GO) test -json -count=1 -vet=off -ldflags='$(TEST_LDFLAGS)' -p $(TEST_P) -parallel $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(GOFLAGS_TEST) $(TEST_FIRST) ./... \
		| tee $(TEST_JSON) | $(GO) run ./hack/testreport -times $(TEST_TIMES)
	cd test/helm && $(TEST_ENV) $(GO) test -count=1 -vet=off -ldflags='$(TEST_LDFLAGS)' -timeout $(TEST_TIMEOUT) $(GOFLAGS_TEST) ./...

.PHONY: test-short
test-short: ## Run the fast unit tests only (no control planes).
	$(TEST_ENV) $(GO) test -short -count=1 -ldflags='$(TEST_LDFLAGS)' $(GOFLAGS_TEST) ./...

.PHONY: test-race-unit
# Only the product's packages: under -short the tree test/ (framework,
# integration, end-to-end, benchmarks) skips what starts clusters, and
# building its test binaries with -race would cost minutes for nothing.
test-race-unit: ## Run the fast unit tests of the product's packages (all but test/) with the race detector (go test -race -short).
	$(GO) test -race -short -count=1 -vet=off -ldflags='$(TEST_LDFLAGS)' $(GOFLAGS_TEST) $$($(GO) list ./... | grep -v '^$(MODULE)/test/')

# The integration tests run most controllers in the test binary; the binaries
# they build and launch (test/framework.Build) are built with -race too, and
# their reports land in RACE_LOG_DIR with the test binaries' and fail the target.
.PHONY: test-race
test-race: kube-bins ## Run the unit tier and the controller integration tests (test/integration) with the race detector, the binaries they launch built with -race too; any race fails it.
	rm -rf $(RACE_LOG_DIR) && mkdir -p $(RACE_LOG_DIR)
	export GORACE=log_path=$(RACE_LOG_DIR)/race; \
	status=0; \
	$(GO) test -race -short -count=1 $(GOFLAGS_TEST) ./... || status=1; \
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(GOFLAGS_TEST) ./test/integration/... || status=1; \
	if compgen -G '$(RACE_LOG_DIR)/race.*' >/dev/null; then cat $(RACE_LOG_DIR)/race.*; echo "data races reported: $(RACE_LOG_DIR)" >&2; status=1; fi; \
	exit $$status

.PHONY: fuzz
fuzz: ## Run every fuzz target (test/fuzz/targets) for FUZZTIME (default 1000000x) and add what it finds to the checked-in corpus.
	hack/fuzz.sh

.PHONY: bench
bench: kube-bins ## Run the benchmarks in test/bench once, but the scale harness (make bench-scale); they print figures (see test/bench/README.md).
	$(GO) test $$($(GO) list ./test/bench/... | grep -v '/test/bench/scale$$') -run XXX -bench . -benchtime 1x -v -timeout 60m

# The scale harness: SCALE_STEPS are the cluster counts it grows the hub to,
# SCALE_OUT where it writes results.json, results.csv, the SVG plots and the
# KubeFleet-scenario report (kubefleet.json, kubefleet.md), and SCALE_ARGS
# its other flags (-settle, -idle, -agents, -baseline-hub-args,
# -kubefleet-clusters...; see test/bench/README.md).
SCALE_STEPS ?= 100,1000,2000,5000,10000
SCALE_OUT   ?= $(ROOT)/_output/bench-scale
SCALE_ARGS  ?=

.PHONY: bench-scale
bench-scale: kube-bins ## Grow one hub through SCALE_STEPS clusters (simulated agents in their own process plus 2 real ones) and measure each step, then run KubeFleet's scenario on a new hub; figures, results, plots and report in SCALE_OUT.
	$(GO) test ./test/bench/scale -run XXX -bench 'Scale|KubeFleet' -benchtime 1x -v -timeout 10h \
		-args -steps $(SCALE_STEPS) -out $(SCALE_OUT) $(SCALE_ARGS)

##@ Development environment

DEV_ENV_DIR ?= $(ROOT)/.dev-env

.PHONY: dev-env
dev-env: build kube-bins node-deps node-images ## Start hub, cluster1, cluster2 and the standby hub hub2, each with a node running the images of make image, in the background and print how to use them.
	$(GO) build -o $(BIN)/dev-env ./test/framework/cmd/dev-env
	$(BIN)/dev-env up --dir $(DEV_ENV_DIR) --kube-bin-dir $(KUBE_BIN) --dist-dir $(ROOT)/dist

# DEMO_TIMINGS collects the time of each step of make demo for the summary
# table it ends with. The Debian packages and the MCP Inspector (downloads)
# install while the Kubernetes binaries compile.
DEMO_TIMINGS := $(ROOT)/_output/demo-timings.tsv
TIMED = hack/timed.sh $(DEMO_TIMINGS)

.PHONY: demo
demo: ## The getting-started flow on the dev-env clusters: hub init, join cluster1, import cluster2 from the hub, accept both, a ManifestWork, a placement rollout, the example add-ons, an MCP client asking kubectl ocm mcp for the fleet; each step timed.
	@mkdir -p $(dir $(DEMO_TIMINGS)) && : >$(DEMO_TIMINGS) && date +%s >$(DEMO_TIMINGS).start
	@$(TIMED) "Debian packages, MCP Inspector (beside the build)" $(MAKE) --no-print-directory node-deps mcp-inspector >$(ROOT)/_output/demo-downloads.log 2>&1 & \
		downloads=$$!; \
		$(TIMED) "build the Kubernetes binaries" $(MAKE) --no-print-directory kube-bins || { wait $$downloads; exit 1; }; \
		if ! wait $$downloads; then cat $(ROOT)/_output/demo-downloads.log; exit 1; fi
	@$(TIMED) "build kubectl-ocm and ocm-controller" $(MAKE) --no-print-directory build
	@$(TIMED) "build the nodes' images" $(MAKE) --no-print-directory node-images
	@$(TIMED) "start hub, cluster1, cluster2 and hub2" $(MAKE) --no-print-directory dev-env
	DEV_ENV_DIR=$(DEV_ENV_DIR) DEMO_TIMINGS=$(DEMO_TIMINGS) hack/demo.sh

.PHONY: dev-env-load
dev-env-load: ## Load IMAGE (a docker save archive or an OCI layout directory; NAME=<repository> for layout images named only by a tag) into the running dev-env: every node pulls its images by their names.
	@if [ -z "$(IMAGE)" ]; then echo "usage: make dev-env-load IMAGE=<docker save archive or OCI layout directory> [NAME=<repository>]" >&2; exit 2; fi
	$(GO) build -o $(BIN)/dev-env ./test/framework/cmd/dev-env
	$(BIN)/dev-env load --dir $(DEV_ENV_DIR) $(if $(NAME),--name $(NAME)) $(IMAGE)

.PHONY: dev-env-down
dev-env-down: ## Stop the development environment started by make dev-env and remove everything it made on the host.
	@if [ -x $(BIN)/dev-env ]; then $(BIN)/dev-env down --dir $(DEV_ENV_DIR); else echo "no dev-env binary: nothing to stop"; fi

##@ Deploy (the targets of OCM's registration-operator guide)

# KUBECONFIG (default ./.kubeconfig, as OCM's), MANAGED_CLUSTER (default
# cluster1), KLUSTERLET_KUBECONFIG_CONTEXT and OLM_NAMESPACE (ignored) pass
# through the environment; see hack/deploy.sh.
DEPLOY_TARGETS := deploy deploy-hub deploy-spoke clean-deploy clean-hub clean-spoke

.PHONY: $(DEPLOY_TARGETS)
deploy: build ## Deploy the hub and a Klusterlet registering as MANAGED_CLUSTER on the cluster of KUBECONFIG; then approve its CSR and accept it (kubectl certificate approve, kubectl patch managedcluster).
deploy-hub: build ## Deploy the ClusterManager operator and the hub on the current context of KUBECONFIG.
deploy-spoke: build ## Deploy the Klusterlet operator and agent on KLUSTERLET_KUBECONFIG_CONTEXT, registering as MANAGED_CLUSTER with the hub of KUBECONFIG.
clean-deploy: build ## Remove what make deploy installed.
clean-hub: build ## Remove the hub (with every cluster still registered).
clean-spoke: build ## Remove the Klusterlet of MANAGED_CLUSTER from KLUSTERLET_KUBECONFIG_CONTEXT.
$(DEPLOY_TARGETS):
	KUBECTL_OCM=$(or $(KUBECTL_OCM),$(BIN)/kubectl-ocm) hack/deploy.sh $@

##@ Verify

.PHONY: verify
verify: verify-fmt verify-vet verify-lint verify-patterns verify-imports verify-generated verify-tidy verify-actions verify-docs ## Run every static check CI runs.

.PHONY: verify-fmt
verify-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# Code patterns the project has a rule against (hack/verify-code-patterns.sh
# lists each with its fix); its self-test first shows every ban still finds
# a planted violation.
.PHONY: verify-patterns
verify-patterns:
	hack/verify-code-patterns.sh --self-test
	hack/verify-code-patterns.sh

# The layering between directories of one layer: each controller domain
# (controllers/*) and each verb (plugins/*) stands alone, and config/ and
# controllers/ never import plugins/ (hack/verifyimports; depguard in
# .golangci.yml holds the rest).
.PHONY: verify-imports
verify-imports:
	$(GO) run ./hack/verifyimports

.PHONY: verify-vet
verify-vet:
	$(TEST_ENV) $(GO) vet ./...
	cd test/kube && $(TEST_ENV) $(GO) vet ./...
	cd test/helm && $(TEST_ENV) $(GO) vet ./...

# The GitHub Actions workflows, checked with actionlint (and with shellcheck
# where it is installed).
.PHONY: verify-actions
verify-actions: $(ACTIONLINT)
	$(ACTIONLINT) -color=false

# The docs: every relative link of README.md, docs/ and the test READMEs
# resolves (to a heading where it names one), and every `kubectl ocm`
# command in their shell code blocks exists with the flags it shows.
.PHONY: verify-docs
verify-docs:
	$(GO) run ./hack/verifydocs

.PHONY: verify-lint
verify-lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

# GENERATED are the paths make generate writes.
GENERATED := pkg/apis config/crd config/charts $(HUB_RBAC_FILE) $(REGISTRATION_RBAC_FILE) $(WORK_RBAC_FILE) $(ADDON_RBAC_FILE)

.PHONY: verify-generated
verify-generated: generate
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated files are stale: run 'make generate' and commit the result"; \
		git status --porcelain -- $(GENERATED); git diff --stat -- $(GENERATED); exit 1; fi

.PHONY: verify-tidy
verify-tidy:
	$(GO) mod tidy -diff
	cd test/kube && $(GO) mod tidy -diff
	cd test/kube/containerd && $(GO) mod tidy -diff
	cd test/kube/netpol && $(GO) mod tidy -diff
	cd test/kube/previous && $(GO) mod tidy -diff
	cd test/helm && $(GO) mod tidy -diff
	cd hack/tools/krew && $(GO) mod tidy -diff

##@ Tools

$(CONTROLLER_GEN):
	GOBIN=$(TOOLS_BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(TOOLS_BIN)/controller-gen $@

$(ACTIONLINT):
	GOBIN=$(TOOLS_BIN) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	mv $(TOOLS_BIN)/actionlint $@

$(GOLANGCI_LINT):
	GOBIN=$(TOOLS_BIN) GOTOOLCHAIN=go$(GO_TOOLCHAIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS_BIN)/golangci-lint $@

.PHONY: clean
clean: ## Remove built binaries (keeps bin/kube, which is slow to rebuild).
	rm -f $(BIN)/kubectl-ocm $(BIN)/ocm-controller $(BIN)/helloworld-addon $(BIN)/hellomanager $(BIN)/dev-env

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
