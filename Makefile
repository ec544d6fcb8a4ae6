# The one test command (README, .ci/run): formatting, vet, the race-enabled
# test suite, then every fuzz target briefly.
#
# FUZZTIME is a count of executions, not a duration: with a duration, Go
# 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" at the deadline, without any failing input (golang/go#75804,
# fixed in Go 1.27; seen here in CI on FuzzPolicyDenied).
# Minimising a new interesting input may take -fuzzminimizetime (default
# 60 s, seen here on FuzzSearcher); bounded so that the run stays short.
GO       ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    ?= golang.org/x/tools/cmd/deadcode@v0.52.0
FUZZTIME ?= 100000x
FUZZMINIMIZETIME ?= 10s

.PHONY: test check unit fuzz bench test-matrix

test: check unit fuzz

# staticcheck with its default checks, and deadcode with -test: a
# function only tests reach is still reached; one nothing reaches is
# removed, not kept for later. Both are pinned and run with go run (no
# tool in go.mod).
check:
	@echo "== $@ started at $$(date -u +%T)"
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd deploy/compose && $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@out="$$($(GO) run $(DEADCODE) -test ./...)"; if [ -n "$$out" ]; then echo "unreachable code:"; echo "$$out"; exit 1; fi

# deploy/compose is a nested module (compose-go stays out of the product's
# go.mod), so ./... above does not reach it. growstack's portable Grow is
# tested on amd64 too (the purego tag). The git package's differential
# and hostile-repository suites take ~5 minutes under -race on 2 loaded
# CPUs: -timeout leaves room above go test's 10-minute default.
unit:
	@echo "== $@ started at $$(date -u +%T)"
	$(GO) test -race -count=1 -timeout 25m ./...
	$(GO) test -count=1 -tags purego ./mcp/internal/growstack
	cd deploy/compose && $(GO) test -race -count=1 ./...

fuzz:
	@echo "== $@ started at $$(date -u +%T)"
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Not part of test: the packages each machine condition affects (no
# AVX2, one CPU, the C locale and a far TZ, umask 077, TMPDIR on tmpfs,
# user namespaces refused, an older or no Landlock), each run under that
# condition as this machine can play it; prints the table of
# docs/testing.md. Needs root.
test-matrix:
	scripts/test-matrix
