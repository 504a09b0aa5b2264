# vppsvc — the two commands the README promises, plus a few for developers.
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: demo test test-long bench vet fmt-check

## demo: render the embedded sample cluster into a fake VPP and trace a packet.
demo:
	$(GO) run ./cmd/vppsvc render
	$(GO) run ./cmd/vppsvc trace --src 10.1.1.2:40000 --dst 10.96.0.10:80

## test: format check, vet, and the whole test suite in short mode (what CI runs).
test: fmt-check vet
	$(GO) test -short -count=1 ./...

## test-long: the same tests with their long (nightly-size) variants.
test-long: vet
	$(GO) test -count=1 -timeout 60m ./...

## bench: the benchmarks whose figures docs/performance.md records.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
