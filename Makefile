# The one test command (README, .ci/run): formatting, vet, the race-enabled
# test suite, then every fuzz target briefly.
GO       ?= go
FUZZTIME ?= 10s

.PHONY: test check unit fuzz bench

test: check unit fuzz

check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd deploy/compose && $(GO) vet ./...

# deploy/compose is a nested module (compose-go stays out of the product's
# go.mod), so ./... above does not reach it.
unit:
	$(GO) test -race -count=1 ./...
	cd deploy/compose && $(GO) test -race -count=1 ./...

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
